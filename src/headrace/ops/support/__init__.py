"""Helpers shared by several ops, not ops themselves.

Batching and padding of elements (``batching``, ``padding``, the ``batch_iterator`` shared by
``batch`` and ``padded_batch``), the index permutation of ``global_shuffle`` (``permutation``) and the
state values of ``scan`` and ``reduce`` (``user_state``). They live with the ops that use them: ``core/``
holds only what every stage or the facade needs, and never imports from here.
"""
