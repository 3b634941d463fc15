"""The parallel runtime: executors, shared memory transport, background producers, shutdown.

- :mod:`.threads` and :mod:`.processes`: the executors behind ``map(num_parallel_calls=...)``;
- :mod:`.launcher`, :mod:`.pool`, :mod:`.worker`: worker processes (never importing ``__main__``),
  kept in a pool; :mod:`.pipeline_workers`: whole-pipeline workers (``parallelize``);
- :mod:`.shm`: elements between processes with array buffers in shared memory;
- :mod:`.parallel_map`, :mod:`.producer` (``prefetch``): the iterators (the parallel interleave lives with its op, ``ops/interleave_parallel.py``);
- :mod:`.shutdown`: everything stops at interpreter exit; :mod:`.defaults`: documented defaults.

Modules are imported on demand, so ``import headrace`` starts no thread and imports no
``multiprocessing``.
"""
