"""Per-stage statistics, the bottleneck report, trace/HTML/TensorBoard export (``it.stats()``), and a
live progress line (``progress(ds)``)."""

from .live import progress
from .record import record_calls
from .stats import StageStats, Stats
from .tensorboard import ScalarWriter, write_tensorboard
from .timeline import Timeline

__all__ = ["ScalarWriter", "StageStats", "Stats", "Timeline", "progress", "record_calls", "write_tensorboard"]
