"""A bounded record of counters over time, for plots and traces.

Samples are taken from the consumer's own ``next()`` calls (no extra thread). When the buffer is full,
every other sample is dropped and the interval doubles, so memory stays bounded on runs of any length
while the whole run stays covered at a coarser resolution (the tf.data profiler keeps everything).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Sample:
    seconds: float  # since the iterator started
    produced: int  # elements handed to the consumer
    wait_seconds: float  # consumer wait so far
    stages: list[tuple]  # per stage: (produced, busy seconds, buffered elements, parallelism)


@dataclass
class Timeline:
    """Ring of :class:`Sample`, thinned by half whenever it reaches ``capacity``."""

    interval_seconds: float = 0.05
    capacity: int = 2048
    samples: list[Sample] = field(default_factory=list)

    def add(self, sample: Sample) -> None:
        self.samples.append(sample)
        if len(self.samples) >= self.capacity:
            self.samples = self.samples[::2]
            self.interval_seconds = max(2 * self.interval_seconds, 0.001)

    def rates(self) -> list[tuple[float, float]]:
        """(time, elements/s to the consumer) between consecutive samples."""
        out = []
        for a, b in zip(self.samples, self.samples[1:]):
            dt = b.seconds - a.seconds
            if dt > 0:
                out.append((b.seconds, (b.produced - a.produced) / dt))
        return out

    def wait_fractions(self) -> list[tuple[float, float]]:
        """(time, share of the interval the consumer spent waiting in next())."""
        out = []
        for a, b in zip(self.samples, self.samples[1:]):
            dt = b.seconds - a.seconds
            if dt > 0:
                out.append((b.seconds, min(1.0, max(0.0, (b.wait_seconds - a.wait_seconds) / dt))))
        return out

    def stage_series(self, index: int, what: int) -> list[tuple[float, float]]:
        """Per-stage series: what=0 elements/s, 1 busy seconds per second (summed over workers),
        2 buffered elements, 3 workers in use (what the autotuner set)."""
        out = []
        for a, b in zip(self.samples, self.samples[1:]):
            dt = b.seconds - a.seconds
            if dt <= 0 or index >= len(b.stages) or index >= len(a.stages):
                continue
            if what in (2, 3):
                out.append((b.seconds, float(b.stages[index][what]) if len(b.stages[index]) > what else 1.0))
            else:
                out.append((b.seconds, (b.stages[index][what] - a.stages[index][what]) / dt))
        return out
