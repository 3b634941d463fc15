"""TensorBoard output without TensorFlow: the trace where the profile plugin looks for it, and
scalar summaries in an event file (``tensorboard --logdir LOGDIR`` shows both).

Event files are TFRecord-framed ``Event`` protocol buffers; the few fields written here (wall time,
step, a tag and a float per scalar) are encoded by hand, so neither tensorflow nor protobuf is
needed to write them.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import struct
import time
from typing import TYPE_CHECKING

from ..io.records.crc import masked_crc32c
from .export import trace_events

if TYPE_CHECKING:
    from .stats import Stats


def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1  # negative int64 values are written as ten-byte two's complement
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def _length_delimited(number: int, payload: bytes) -> bytes:
    return _field(number, 2) + _varint(len(payload)) + payload


def _event(
    wall_time: float, step: int, *, file_version: str = "", scalars: dict[str, float] | None = None
) -> bytes:
    """An ``Event`` message: wall_time (1, double), step (2, int64), file_version (3) or summary (5)."""
    out = _field(1, 1) + struct.pack("<d", wall_time) + _field(2, 0) + _varint(step)
    if file_version:
        out += _length_delimited(3, file_version.encode())
    if scalars:
        values = b"".join(
            _length_delimited(1, _length_delimited(1, tag.encode()) + _field(2, 5) + struct.pack("<f", value))
            for tag, value in scalars.items()
        )
        out += _length_delimited(5, values)
    return out


def _frame(record: bytes) -> bytes:
    length = struct.pack("<Q", len(record))
    return (
        length + struct.pack("<I", masked_crc32c(length)) + record + struct.pack("<I", masked_crc32c(record))
    )


class ScalarWriter:
    """Appends scalar summaries to a new ``events.out.tfevents.*`` file in ``logdir``."""

    def __init__(self, logdir: str):
        os.makedirs(logdir, exist_ok=True)
        now = time.time()
        self.path = os.path.join(logdir, f"events.out.tfevents.{now:.6f}.{socket.gethostname()}.headrace")
        self._file = open(self.path, "wb")
        self._file.write(_frame(_event(now, 0, file_version="brain.Event:2")))

    def add(self, step: int, scalars: dict[str, float], wall_time: float | None = None) -> None:
        self._file.write(
            _frame(_event(time.time() if wall_time is None else wall_time, step, scalars=scalars))
        )

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> ScalarWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _tag(stage_name: str) -> str:
    # TensorBoard groups tags by the text before the first "/": keep stage names free of it.
    return stage_name.replace("/", "∕")


def write_tensorboard(stats: Stats, logdir: str, run: str | None = None) -> dict[str, str]:
    """Write the trace and the scalars of ``stats`` under ``logdir``; returns both paths.

    Scalars are one point per timeline sample (step = elements handed to the consumer):
    ``pipeline/elements_per_second``, ``pipeline/wait_fraction`` and ``busy/<stage>`` (the share of
    its workers' time the stage was busy); one point per whole run under ``run/``.
    """
    run = run or time.strftime("%Y_%m_%d_%H_%M_%S")
    trace_dir = os.path.join(logdir, "plugins", "profile", run)
    os.makedirs(trace_dir, exist_ok=True)
    trace_path = os.path.join(trace_dir, f"{socket.gethostname()}.trace.json.gz")
    with gzip.open(trace_path, "wt") as f:
        json.dump(trace_events(stats), f)
    timeline = stats.timeline
    started = time.time() - stats.elapsed_seconds
    with ScalarWriter(logdir) as writer:
        rates = dict(timeline.rates())
        waits = dict(timeline.wait_fractions())
        busy = {}
        for stage in stats.stages:  # busy seconds per second over the workers in use then: a share
            workers = dict(timeline.stage_series(stage.index, 3))
            busy[stage.name] = {
                t: min(1.0, value / max(workers.get(t, 1.0), 1.0))
                for t, value in timeline.stage_series(stage.index, 1)
            }
        for sample in timeline.samples[1:]:
            t = sample.seconds
            scalars = {}
            if t in rates:
                scalars["pipeline/elements_per_second"] = rates[t]
            if t in waits:
                scalars["pipeline/wait_fraction"] = waits[t]
            for name, series in busy.items():
                if t in series:
                    scalars[f"busy/{_tag(name)}"] = series[t]
            if scalars:
                writer.add(sample.produced, scalars, started + t)
        writer.add(
            stats.produced,
            {
                "run/elements_per_second": stats.elements_per_second,
                "run/wait_fraction": stats.wait_fraction,
                "run/startup_seconds": stats.startup_seconds,
            },
        )
    return {"trace": trace_path, "scalars": writer.path}
