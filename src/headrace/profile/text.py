"""Plain-text rendering of a :class:`~headrace.profile.stats.Stats` report."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .stats import Stats


def _per_element(seconds: float) -> str:
    if seconds <= 0:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def _workers(stage) -> str:
    if stage.executor == "inline":
        return "in the consumer's thread"
    return f"{stage.parallelism} {stage.executor} worker{'s' if stage.parallelism > 1 else ''}"


def stage_table(stats: Stats) -> list[str]:
    rows = [("stage (output first)", "elements", "per element", "busy", "workers", "buffer")]
    for s in stats.stages:
        buffer = f"{s.buffered}/{s.buffer_capacity}" if s.buffer_capacity else "-"
        workers = (
            f"{s.parallelism} {s.executor}" if s.parallelism > 1 or s.executor not in ("inline",) else "1"
        )
        rows.append(
            (
                "  " * s.depth + s.name,
                f"{s.produced:,}",
                _per_element(s.seconds_per_element),
                f"{100 * s.utilisation:.0f}%",
                workers,
                buffer,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
        for row in rows
    ]


def render_report(stats: Stats) -> str:
    diagnosis = stats.diagnosis
    lines = [
        f"headrace pipeline report: {stats.produced:,} elements in {stats.elapsed_seconds:.2f} s "
        f"({stats.elements_per_second:,.0f} elements/s to the consumer)",
        diagnosis.summary,
    ]
    if diagnosis.bottleneck is not None:
        stage = stats.stage(diagnosis.bottleneck)
        lines.append(
            f"Bottleneck: {stage.name}: busy {100 * stage.utilisation:.0f}% of its capacity "
            f"({_workers(stage)}, "
            f"{_per_element(stage.seconds_per_element)} per element)."
        )
    if diagnosis.advice:
        lines.append("What to change:")
        lines.extend(f"  {i}. {item}" for i, item in enumerate(diagnosis.advice, 1))
    tuned = [s for s in stats.stages if "tuned" in s.extra]
    if tuned:
        lines.append("Autotuned:")
        lines.extend(f"  {s.name}: {s.extra['tuned']}" for s in tuned)
    chosen = [s for s in stats.stages if s.extra.get("executor_reason")]
    if chosen:
        lines.append("Executors:")
        lines.extend(f"  {s.name}: {s.executor}: {s.extra['executor_reason']}" for s in chosen)
    lines.append("")
    lines.extend(stage_table(stats))
    return "\n".join(lines)
