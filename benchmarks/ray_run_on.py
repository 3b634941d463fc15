"""``Dataset.run_on``: CPU-bound preprocessing on 1, 2 and 3 local Ray nodes vs local headrace.

A pipeline of ``range(N).map(work)`` where ``work`` burns about ``--work-ms`` of CPU per element in
numpy, then ``batch(32)``. Rows: local headrace (one process), and ``run_on`` with one worker per
node on a ``ray.cluster_utils.Cluster`` of 1, 2, 3 nodes with ``--cpus-per-node`` CPUs each. On a
machine with fewer cores than nodes x CPUs the nodes share cores, so the scaling is bounded by the
cores (printed); the 1-node row against local headrace is the overhead of going through Ray. Rates
are steady state: timed from the second batch on (the first includes starting the actors).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import headrace as hr
from _common import have, report


def make_work(ms: float):
    size = 64

    def work(x):
        a = np.full((size, size), float(x) % 7 + 1.0)
        deadline = time.thread_time() + ms / 1000
        while time.thread_time() < deadline:
            a = np.tanh(a @ a / size)
        return np.float32(a[0, 0] + x)

    return work


def pipeline(elements: int, ms: float) -> hr.Dataset:
    return hr.Dataset.range(elements).map(make_work(ms))


def rate(ds: hr.Dataset, elements: int) -> float:
    """Elements per second after the first batch (which includes starting the workers: their start-up,
    about a second per actor, is paid once per iterator, not per element)."""
    it = iter(ds.batch(32))
    count = len(next(it))
    start = time.perf_counter()
    for batch in it:
        count += len(batch)
    assert count == elements
    return (elements - 32) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--elements", type=int, default=1000)
    parser.add_argument("--work-ms", type=float, default=5.0)
    parser.add_argument("--cpus-per-node", type=int, default=1)
    parser.add_argument("--max-nodes", type=int, default=3)
    args = parser.parse_args()
    if not have("ray"):
        print("ray_run_on: Ray is not installed (pip install 'headrace[ray]'); skipped")
        return
    from ray.cluster_utils import Cluster

    import ray

    rows = [("local headrace", rate(pipeline(args.elements, args.work_ms), args.elements))]
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": args.cpus_per_node, "include_dashboard": False}
    )
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        for nodes in range(1, args.max_nodes + 1):
            if nodes > 1:
                cluster.add_node(num_cpus=args.cpus_per_node)
                cluster.wait_for_nodes()
            workers = nodes * args.cpus_per_node
            ds = pipeline(args.elements, args.work_ms).run_on(num_workers=workers, chunk_size=16)
            rows.append((f"run_on, {nodes} node(s) x {args.cpus_per_node} CPU", rate(ds, args.elements)))
    finally:
        ray.shutdown()
        cluster.shutdown()
    report(
        f"{args.elements} elements x {args.work_ms} ms CPU each; this machine has {os.cpu_count()} cores "
        f"(nodes share them)",
        rows,
        "elements/s",
        "local headrace",
    )


if __name__ == "__main__":
    main()
