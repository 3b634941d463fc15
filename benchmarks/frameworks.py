"""Framework adapters: what they add over iterating the dataset directly, and to_torch's H2D bandwidth.

CPU (issue 13 goal: adapters add at most 2%): one epoch of a pipeline iterated directly (numpy), through
``headrace.torch.to_torch`` (tensors), through ``headrace.torch.IterableDataset`` in a
``DataLoader(batch_size=None)``, and through ``headrace.jax.prefetch_to_device``. Two pipelines:
"realistic" (per-batch work of a small image pipeline: 64 images of 3x64x64 normalised) and "trivial"
(batches of a table slice: almost no work, so the adapters' fixed cost per batch shows in full).
The hand-written rows are the glue a user would write instead: compare each adapter with its own.

GPU (goal: at least 0.9 of a pinned copy's bandwidth; skipped without CUDA): ``to_torch(ds,
device="cuda")`` over 64 MiB float32 batches, with a consumer that only touches each batch, against
copying a pinned tensor of the same size with ``non_blocking=True`` in a loop.

Run: ``python benchmarks/frameworks.py [--quick]``. Other load on the machine adds noise.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import headrace as hr
from _common import have, median_seconds, report


def realistic(batches: int) -> hr.Dataset:
    images = np.random.default_rng(0).integers(0, 255, size=(256, 3, 64, 64), dtype=np.uint8)
    mean = np.float32(120.0)
    return (
        hr.Dataset.from_tensor_slices(images)
        .repeat()
        .take(batches * 64)
        .batch(64)
        .map(lambda b: ((b.astype(np.float32) - mean) / 58.0, b[:, 0, 0, 0].astype(np.int64)))
    )


def trivial(batches: int) -> hr.Dataset:
    table = np.random.default_rng(0).normal(size=(batches * 32, 16)).astype(np.float32)
    return hr.Dataset.from_tensor_slices(table).batch(32)


def consume(iterable) -> int:
    count = 0
    for _ in iterable:
        count += 1
    return count


def interleaved_best(runs: dict, repeats: int) -> dict:
    """Best time of each run, the runs taken in turn (ABCABC...): load from other processes then
    hits every contender alike instead of whichever ran during it."""
    best = {name: float("inf") for name in runs}
    for fn in runs.values():
        fn()  # warm-up: imports, first-iteration costs
    for _ in range(repeats):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def cpu_rows(name: str, make, batches: int, repeats: int) -> None:
    runs = {"direct (numpy)": lambda: consume(make(batches))}
    if have("torch"):
        import torch

        import headrace.torch as hrt

        runs["hand-written torch.from_numpy"] = lambda: consume(
            tuple(torch.from_numpy(leaf) for leaf in b) if isinstance(b, tuple) else torch.from_numpy(b)
            for b in make(batches)
        )
        runs["to_torch"] = lambda: consume(hrt.to_torch(make(batches)))
        runs["IterableDataset+DataLoader(0)"] = lambda: consume(
            torch.utils.data.DataLoader(hrt.IterableDataset(make(batches)), batch_size=None)
        )
    else:
        print("  torch not installed: torch adapters skipped")
    if have("jax"):
        import jax

        import headrace.jax as hrj

        runs["hand-written jax.device_put"] = lambda: consume(jax.device_put(b) for b in make(batches))
        runs["jax prefetch_to_device"] = lambda: consume(hrj.prefetch_to_device(make(batches), size=2))
    else:
        print("  jax not installed: jax adapter skipped")
    best = interleaved_best(runs, repeats)
    rows = [(label, batches / seconds) for label, seconds in best.items()]
    report(
        f"{name}: batches per second over one epoch of {batches} batches", rows, "batches/s", "direct (numpy)"
    )
    base = rows[0][1]
    for label, rate in rows[1:]:
        print(f"  {label}: adds {100 * (base / rate - 1):+.1f}% time per batch (goal <= +2%)")


def fixed_costs(repeats: int) -> None:
    """The adapters' own work per batch, timed alone: steadier than whole-epoch ratios on a busy machine."""
    batch = (np.ones((64, 3, 64, 64), np.float32), np.arange(64))
    n = 20_000
    source = hr.Dataset.from_tensors(0).repeat(n)
    plain = interleaved_best(
        {"iterate": lambda: consume(source), "distribute": lambda: consume(source.distribute())}, repeats
    )
    print("\nfixed cost per batch, timed alone")
    print(f"  distribute() on one rank: {(plain['distribute'] - plain['iterate']) / n * 1e6:+.2f} us")
    if have("torch"):
        import headrace.torch as hrt

        seconds = interleaved_best({"to_tensors": lambda: [hrt.to_tensors(batch) for _ in range(n)]}, repeats)
        print(f"  to_tensors of (images, labels), zero-copy: {seconds['to_tensors'] / n * 1e6:.2f} us")
    per_batch = interleaved_best({"realistic": lambda: consume(realistic(200))}, repeats)["realistic"] / 200
    print(f"  for scale: one batch of the realistic pipeline takes {per_batch * 1e6:,.0f} us")


def gpu_bandwidth(batches: int, repeats: int) -> None:
    import torch

    import headrace.torch as hrt

    size = 16 * 1024 * 1024  # float32 elements: 64 MiB a batch
    host = torch.empty(size, dtype=torch.float32).pin_memory()
    device = torch.device("cuda")

    def pinned_copy():
        for _ in range(batches):
            host.to(device, non_blocking=True).sum()
        torch.cuda.synchronize()

    array = np.ones(size, np.float32)
    dataset = hr.Dataset.from_tensors(array).repeat(batches)

    def through_to_torch():
        for batch in hrt.to_torch(dataset, device=device, pin_memory=True, prefetch=2):
            batch.sum()
        torch.cuda.synchronize()

    gib = batches * size * 4 / 2**30
    rows = [
        ("pinned copy", gib / median_seconds(pinned_copy, repeats)),
        ("to_torch(device=cuda)", gib / median_seconds(through_to_torch, repeats)),
    ]
    report(f"host-to-device, {batches} batches of 64 MiB", rows, "GiB/s", "pinned copy")
    print(f"  to_torch reaches {rows[1][1] / rows[0][1]:.2f} of the pinned copy (goal >= 0.90)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer batches and repeats (a smoke test)")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    cpu_rows("realistic", realistic, 100 if args.quick else 400, repeats)
    cpu_rows("trivial", trivial, 500 if args.quick else 3000, repeats)
    fixed_costs(repeats)
    if have("torch"):
        import torch

        if torch.cuda.is_available():
            gpu_bandwidth(20 if args.quick else 100, repeats)
            return
    print("\nhost-to-device bandwidth: skipped (no CUDA device); run this script on a GPU machine")


if __name__ == "__main__":
    main()
