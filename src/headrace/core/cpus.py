"""How many CPUs this process may really use: the one answer every stage and the tuner share.

``os.cpu_count()`` counts the machine's CPUs; a process pinned with ``taskset``, a container's cpuset
or a cgroup CPU quota may use fewer, and running more workers than that only makes them queue.
"""

from __future__ import annotations

import math
import os


def read_system_file(path: str) -> str | None:
    """A small system file (/proc, /sys) stripped, or None when it cannot be read."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def cgroup_cpu_limit(root: str = "/sys/fs/cgroup") -> float | None:
    """CPUs allowed by the cgroup quota (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``), or None."""
    v2 = read_system_file(os.path.join(root, "cpu.max"))
    if v2:
        quota, _, period = v2.partition(" ")
        if quota != "max" and period:
            return int(quota) / int(period)
        return None
    quota_us = read_system_file(os.path.join(root, "cpu", "cpu.cfs_quota_us"))
    period_us = read_system_file(os.path.join(root, "cpu", "cpu.cfs_period_us"))
    if quota_us and period_us and int(quota_us) > 0:
        return int(quota_us) / int(period_us)
    return None


def available_cpus(root: str = "/sys/fs/cgroup") -> int:
    """CPUs this process may run on (affinity), capped by the cgroup quota; at least 1.

    >>> available_cpus() >= 1
    True
    """
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = cgroup_cpu_limit(root)
    if quota is not None:
        cpus = min(cpus, math.floor(quota))
    return max(1, cpus)


def schedulable_cpus() -> int:
    """CPUs this process may be scheduled on (affinity only, no cgroup quota): TensorFlow's
    ``port::MaxParallelism()``, which fixes tf.data's default ``cycle_length``. Interleave orders
    depend on the cycle length, so matching tf.data's order needs its number, not the tuner's budget.

    >>> schedulable_cpus() >= available_cpus()
    True
    """
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def interleave_cycle_length(num_parallel_calls: int | None = None) -> int:
    """tf.data's ``cycle_length`` when it is None or AUTOTUNE (``AUTOTUNE`` is -1 here):

    - a serial interleave (``num_parallel_calls=None``): the schedulable CPUs;
    - ``num_parallel_calls=k``: ``min(k, CPUs)``;
    - ``num_parallel_calls=AUTOTUNE``: ``ceil(CPUs / 3)`` (tf.data keeps two future cycle elements
      prefetching per current one, so three threads per cycle slot).

    The order of an interleave depends on its cycle length, so this is tf.data's rule exactly.

    >>> interleave_cycle_length(None) == schedulable_cpus(), interleave_cycle_length(1)
    (True, 1)
    """
    cpus = schedulable_cpus()
    if num_parallel_calls is None:
        return cpus
    if num_parallel_calls == -1:
        return -(-cpus // 3)
    return max(1, min(num_parallel_calls, cpus))
