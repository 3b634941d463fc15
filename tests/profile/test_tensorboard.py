import gzip
import json
import os
import time

import pytest

import headrace as hr
from headrace.profile.tensorboard import ScalarWriter, _varint


def test_varints_match_protobuf():
    assert _varint(0) == b"\x00" and _varint(300) == b"\xac\x02"
    assert _varint(-1) == b"\xff" * 9 + b"\x01"  # int64 -1, as protobuf writes it


def stats_of_a_run():
    def decode(x):
        time.sleep(0.001)
        return x

    it = iter(hr.Dataset.range(200).map(decode).batch(4))
    it.timeline.interval_seconds = 0.01
    list(it)
    return it.stats()


def test_tensorboard_reads_the_scalars_and_finds_the_trace(tmp_path):
    event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    stats = stats_of_a_run()
    paths = stats.save_tensorboard(str(tmp_path), run="run1")
    assert paths["trace"] == os.path.join(
        str(tmp_path), "plugins", "profile", "run1", os.path.basename(paths["trace"])
    )
    assert paths["trace"].endswith(".trace.json.gz")
    with gzip.open(paths["trace"], "rt") as f:
        assert any(e["ph"] == "C" for e in json.load(f)["traceEvents"])
    accumulator = event_accumulator.EventAccumulator(
        str(tmp_path), size_guidance={event_accumulator.SCALARS: 0}
    )
    accumulator.Reload()
    tags = set(accumulator.Tags()["scalars"])
    assert {"pipeline/elements_per_second", "pipeline/wait_fraction", "run/wait_fraction"} <= tags
    assert any(tag.startswith("busy/map(decode") for tag in tags)
    (total,) = accumulator.Scalars("run/elements_per_second")
    assert total.step == stats.produced and total.value == pytest.approx(stats.elements_per_second, rel=1e-5)
    waits = [event.value for event in accumulator.Scalars("pipeline/wait_fraction")]
    assert waits and all(0 <= w <= 1 for w in waits)
    (busy_tag,) = [tag for tag in tags if tag.startswith("busy/map(decode")]
    busy = [event.value for event in accumulator.Scalars(busy_tag)]
    assert busy and all(0 <= b <= 1 for b in busy) and max(busy) > 0.3  # the map is the busy stage
    steps = [event.step for event in accumulator.Scalars("pipeline/elements_per_second")]
    assert steps == sorted(steps) and steps[-1] <= stats.produced


def test_scalar_writer_files_are_framed_records(tmp_path):
    from headrace.io.records.crc import masked_crc32c

    with ScalarWriter(str(tmp_path)) as writer:
        writer.add(1, {"a": 1.5})
    data = open(writer.path, "rb").read()
    position, records = 0, 0
    while position < len(data):
        length = int.from_bytes(data[position : position + 8], "little")
        assert int.from_bytes(data[position + 8 : position + 12], "little") == masked_crc32c(
            data[position : position + 8]
        )
        record = data[position + 12 : position + 12 + length]
        crc = data[position + 12 + length : position + 16 + length]
        assert int.from_bytes(crc, "little") == masked_crc32c(record)
        position += 16 + length
        records += 1
    assert records == 2 and "tfevents" in os.path.basename(writer.path)
