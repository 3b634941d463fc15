"""Per-element engine overhead: range(N).map(f).filter(g).batch(256) with trivial Python functions.

Compared, in one run: a plain Python loop making the same calls on the same values, headrace, and
tf.data when TensorFlow is installed. Goal (issue 10): a serial pipeline's time per element at most
1.5x the plain loop's. Also: the cost of the per-element generator of ``map(seed=)`` (goal: <= 5 us),
against the SeedSequence + PCG64 it replaced, in CPU time (wall time on a shared machine adds waits).
"""

from __future__ import annotations

import time

import numpy as np

import headrace as hr
from _common import have, median_seconds, report
from headrace.runtime.calls import element_rng

N = 200_000


def f(x):
    return x + 1


def g(x):
    return x % 3 != 0


def plain_loop() -> int:
    batches = 0
    batch = []
    for x in np.arange(N):  # the same numpy int64 scalars headrace yields
        y = f(x)
        if g(y):
            batch.append(y)
            if len(batch) == 256:
                np.asarray(batch)
                batches += 1
                batch = []
    if batch:
        np.asarray(batch)
        batches += 1
    return batches


def headrace_pipeline(options: hr.Options | None = None) -> int:
    return sum(
        1 for _ in hr.Dataset.range(N).map(f).filter(g).batch(256).with_options(options or hr.Options())
    )


def every_call_timed(run):
    """``run`` with the stage timing on every call (``options.profiling.sample_one_in = 0``), as
    before sampling: what sampling saves. The default times the first calls, then about one in nine."""
    options = hr.Options()
    options.profiling.sample_one_in = 0
    return lambda: run(options)


def headrace_unbatched(options: hr.Options | None = None) -> int:
    # Without batch every stage is pulled one element at a time: the worst case for overhead.
    return sum(1 for _ in hr.Dataset.range(N).map(f).filter(g).with_options(options or hr.Options()))


def plain_unbatched() -> int:
    return sum(1 for x in np.arange(N) if g(f(x)))


def main() -> None:
    assert plain_loop() == headrace_pipeline()
    rows = [
        ("plain Python loop", N / median_seconds(plain_loop)),
        ("headrace", N / median_seconds(headrace_pipeline)),
        ("headrace, every call timed", N / median_seconds(every_call_timed(headrace_pipeline))),
    ]
    if have("tensorflow"):
        import os

        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        tf_ds = tf.data.Dataset.range(N).map(f).filter(g).batch(256)
        rows.append(("tf.data (graph-traced f, g)", N / median_seconds(lambda: sum(1 for _ in tf_ds))))
        py_ds = (
            tf.data.Dataset.range(N)
            .map(lambda x: tf.py_function(f, [x], tf.int64))
            .filter(lambda x: tf.py_function(g, [x], tf.bool))
            .batch(256)
        )
        rows.append(
            ("tf.data (py_function f, g)", N / median_seconds(lambda: sum(1 for _ in py_ds), repeats=1))
        )
    else:
        print("tensorflow not installed: tf.data rows skipped (make peers)")
    report(
        f"range({N}).map(f).filter(g).batch(256), elements/s (median of 5)",
        rows,
        "elem/s",
        "plain Python loop",
    )
    rates = dict(rows)
    print(
        f"  serial overhead: {rates['plain Python loop'] / rates['headrace']:.2f}x the plain loop's time per "
        "element (goal <= 1.5x)"
    )
    rows = [
        ("plain Python loop", N / median_seconds(plain_unbatched)),
        ("headrace", N / median_seconds(headrace_unbatched)),
        ("headrace, every call timed", N / median_seconds(every_call_timed(headrace_unbatched))),
    ]
    report("unbatched range.map.filter, elements/s (median of 5)", rows, "elem/s", "plain Python loop")
    zip_cost()
    rng_cost()
    without_timing(rows)  # last: it unwraps the timing template for the rest of this process


def zip_cost() -> None:
    """zip pulls whole chunks when at most one input can fail (a chunk gives an error at its place,
    so the failing row is known) and builds rows one at a time when two or more can (so an error
    drops exactly its row): the three side by side, and a plain Python zip loop."""

    def plain() -> int:
        return sum(1 for _ in zip(np.arange(N), map(f, np.arange(N))))

    def one_fallible() -> int:
        return (
            sum(1 for _ in hr.Dataset.zip((hr.Dataset.range(N), hr.Dataset.range(N).map(f))).batch(256)) * 256
        )

    def two_fallible() -> int:
        mapped = hr.Dataset.range(N).map(f)
        return sum(1 for _ in hr.Dataset.zip((mapped, mapped)).batch(256)) * 256

    def chunks() -> int:
        return sum(1 for _ in hr.Dataset.zip((hr.Dataset.range(N), hr.Dataset.range(N))).batch(256)) * 256

    rows = [
        ("plain Python zip loop", N / median_seconds(plain)),
        ("zip(range, range.map(f)): chunks beside one fallible input", N / median_seconds(one_fallible)),
        ("zip(range.map(f), range.map(f)): row by row", N / median_seconds(two_fallible)),
        ("zip(range, range): whole chunks", N / median_seconds(chunks)),
    ]
    report("zip(...).batch(256), rows/s (median of 5)", rows, "rows/s", "plain Python zip loop")


def without_timing(unbatched_rows: list) -> None:
    """The unbatched pipeline with the timing template unwrapped from every stage class: what
    timing costs at all (sampled or not). Changes the classes, so it runs last."""
    from headrace.core.node import NodeIterator

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    for cls in {NodeIterator, *subclasses(NodeIterator)}:
        for name in ("__next__", "next_chunk"):
            method = cls.__dict__.get(name)
            if method is not None and hasattr(method, "__wrapped__"):
                setattr(cls, name, method.__wrapped__)
    rows = [*unbatched_rows, ("headrace, no stage timing", N / median_seconds(headrace_unbatched))]
    report("unbatched range.map.filter, timing removed (median of 5)", rows, "elem/s", "plain Python loop")


def rng_cost(count: int = 20_000) -> None:
    def seed_sequence(seed, iteration, epoch, position):  # what map(seed=) used before
        return np.random.Generator(
            np.random.PCG64(np.random.SeedSequence([seed, iteration, epoch, position]))
        )

    print("\nper-element generator of map(seed=), CPU time per element (best of 5)")
    for name, make in (
        ("element_rng (Philox, counter-based)", element_rng),
        ("SeedSequence + PCG64", seed_sequence),
    ):
        best = float("inf")
        for _ in range(5):
            start = time.thread_time()
            for position in range(count):
                make(7, 0, 0, position)
            best = min(best, time.thread_time() - start)
        print(f"  {name:<36} {best / count * 1e6:6.2f} us")


if __name__ == "__main__":
    main()
