"""What it costs that the arrays headrace hands out are the user's own (issue 13).

- ``cache()`` in memory keeps read-only copies it owns and hands those out every pass. Measured: the
  filling pass against reading the input alone (the copy costs once), and later passes against
  handing out a fresh writable copy each pass (what "copy on every read" would cost).
- ``from_tensor_slices`` copies a writable array once when the dataset is built (as tf.data does) and
  hands out read-only views. Measured: building from a writable array (copy) against a read-only
  one (no copy), and iterating either.

Two element sizes: 224x224x3 uint8 images (150 KB) and small float32 feature rows (256 B).
Wall times on a shared machine are noisy: read the ratios, not the absolute rates.
"""

from __future__ import annotations

import numpy as np

import headrace as hr
from _common import median_seconds, report

SHAPES = {
    "image 224x224x3 uint8": ((224, 224, 3), np.uint8, 400),
    "row 64 float32": ((64,), np.float32, 50_000),
}


def _source(shape, dtype, count):
    data = np.random.default_rng(0).integers(0, 255, size=(count, *shape)).astype(dtype)
    signature = hr.TensorSpec(shape, dtype)
    return data, lambda: hr.Dataset.from_generator(lambda: iter(data), output_signature=signature)


def _drain(ds) -> int:
    count = 0
    for _ in ds:
        count += 1
    return count


def cache_costs(label: str, shape, dtype, count: int) -> None:
    _, make = _source(shape, dtype, count)

    def fill():  # a new cache node each time: the first pass fills it
        return _drain(make().cache())

    cached = make().cache()
    _drain(cached)
    copying = cached.map(np.copy)  # a fresh writable copy per element, every pass
    rows = [
        ("input alone", count / median_seconds(lambda: _drain(make()))),
        ("cache: filling pass (copies once)", count / median_seconds(fill)),
        ("cache: later pass, read-only", count / median_seconds(lambda: _drain(cached))),
        ("cache: later pass + copy per element", count / median_seconds(lambda: _drain(copying))),
    ]
    report(f"memory cache, {label} ({count} elements)", rows, "elements/s", "input alone")


def tensor_slices_costs(label: str, shape, dtype, count: int) -> None:
    data, _ = _source(shape, dtype, count)
    frozen = data.copy()
    frozen.flags.writeable = False
    megabytes = data.nbytes / 1e6
    build_copy = median_seconds(lambda: hr.Dataset.from_tensor_slices(data))
    build_view = median_seconds(lambda: hr.Dataset.from_tensor_slices(frozen))
    print(f"\nfrom_tensor_slices, {label}: {megabytes:.0f} MB")
    print(
        f"  build from a writable array (one copy) {build_copy * 1e3:8.2f} ms ({megabytes / build_copy:,.0f} MB/s)"
    )
    print(f"  build from a read-only array (no copy) {build_view * 1e3:8.2f} ms")
    rows = [
        (
            "iterate, built from read-only",
            count / median_seconds(lambda: _drain(hr.Dataset.from_tensor_slices(frozen))),
        ),
        (
            "iterate, built from writable",
            count / median_seconds(lambda: _drain(hr.Dataset.from_tensor_slices(data))),
        ),
    ]
    report(
        f"from_tensor_slices, {label}, build + one pass", rows, "elements/s", "iterate, built from read-only"
    )


def main() -> None:
    for label, (shape, dtype, count) in SHAPES.items():
        cache_costs(label, shape, dtype, count)
        tensor_slices_costs(label, shape, dtype, count)


if __name__ == "__main__":
    main()
