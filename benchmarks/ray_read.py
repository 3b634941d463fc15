"""Read + parse of TFRecord files of tf.train.Example into a Ray Data dataset.

Side by side, on the same 4 files (each a read task): ``headrace.ray.read_tfrecords`` (headrace's
compiled framing and parser, no TensorFlow), Ray Data's own ``ray.data.read_tfrecords`` (needs
TensorFlow; skipped when it is absent), and local headrace (``TFRecordDataset.batch.map(parse_example)``,
one process) as the reference. Ray runs locally (``ray.init``) on this machine's cores.
Rates are medians of 3 runs of ``materialize()``; ``--records N`` sets the size (default 200,000).
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import headrace as hr
from _common import have, median_seconds, report

SPEC = {
    "label": hr.io.FixedLenFeature([], "int64"),
    "features": hr.io.FixedLenFeature([16], "float32"),
    "id": hr.io.FixedLenFeature([], "string"),
}


def write_files(folder: str, records: int) -> list[str]:
    rng = np.random.default_rng(0)
    examples = (
        hr.io.serialize_example(
            {"label": i % 10, "features": rng.random(16, dtype=np.float32), "id": f"row-{i}".encode()}
        )
        for i in range(records)
    )
    return hr.io.write_shards(examples, os.path.join(folder, "bench"), num_shards=4)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    args = parser.parse_args()
    if not have("ray"):
        print("ray_read: Ray is not installed (pip install 'headrace[ray]'); skipped")
        return
    import ray
    from headrace.ray import read_tfrecords

    with tempfile.TemporaryDirectory() as folder:
        paths = write_files(folder, args.records)
        ray.init(log_to_driver=False, include_dashboard=False)
        try:

            def local() -> int:
                ds = hr.TFRecordDataset(paths).batch(1024).map(lambda b: hr.io.parse_example(b, SPEC))
                return sum(len(c["label"]) for c in ds)

            def headrace_ray() -> int:
                return read_tfrecords(paths, SPEC).materialize().count()

            assert local() == headrace_ray() == args.records
            rows = [
                ("local headrace (1 process)", args.records / median_seconds(local, repeats=3)),
                ("headrace.ray.read_tfrecords", args.records / median_seconds(headrace_ray, repeats=3)),
            ]
            if have("tensorflow"):

                def ray_data() -> int:
                    return ray.data.read_tfrecords(paths).materialize().count()

                rows.append(
                    ("ray.data.read_tfrecords (TF)", args.records / median_seconds(ray_data, repeats=3))
                )
            else:
                print("ray.data.read_tfrecords needs TensorFlow (make peers); its row is skipped")
            report(
                f"read + parse {args.records:,} Examples in 4 files, {os.cpu_count()} cores",
                rows,
                "records/s",
                "headrace.ray.read_tfrecords",
            )
        finally:
            ray.shutdown()


if __name__ == "__main__":
    main()
