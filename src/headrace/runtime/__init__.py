"""The parallel runtime: executors, shared memory transport, background producers, shutdown.

- :mod:`.threads` and :mod:`.processes`: the executors behind ``map(num_parallel_calls=...)``;
- :mod:`.launcher`, :mod:`.pool`, :mod:`.worker`: worker processes (never importing ``__main__``),
  kept in a pool (``parallelize``'s whole-pipeline workers: ``ops/parallelize_workers.py``);
- :mod:`.shm`: elements between processes with array buffers in shared memory;
- :mod:`.producer`: a background thread filling a buffer (``prefetch``, the parallel interleave's reads);
  the ops' own iterators live with their ops (``ops/map_parallel.py``, ``ops/interleave_parallel.py``, ``ops/parallelize_workers.py``);
- :mod:`.shutdown`: everything stops at interpreter exit; :mod:`.defaults`: documented defaults.

Modules are imported on demand, so ``import headrace`` starts no thread and imports no
``multiprocessing``.
"""
