"""Plain-text rendering of a :class:`~headrace.profile.stats.Stats` report."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .stats import StageStats, Stats


def _per_element(seconds: float) -> str:
    if seconds <= 0:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def _workers(stats: Stats, stage: StageStats) -> str:
    if stage.executor == "inline":
        runner = stats.runs_on(stage)
        return "in the consumer's thread" if runner is None else f"on the thread of {runner.name}"
    return f"{stage.parallelism} {stage.executor} worker{'s' if stage.parallelism > 1 else ''}"


def one_time_lines(stats: Stats) -> list[str]:
    """Startup and first-call costs, kept out of the per-element figures."""
    costs = [("building the pipeline in iter() (opening files, starting workers)", stats.startup_seconds)]
    costs.extend(
        (f"first call of {s.name} (compiling, opening, filling buffers)", s.one_time_seconds)
        for s in stats.stages
        if s.one_time_seconds > 0
    )
    lines = [f"  {label}: {_per_element(seconds)}" for label, seconds in costs if seconds >= 1e-3]
    if stats.first_element_seconds is not None:
        lines.append(
            f"  first element reached the consumer after {_per_element(stats.first_element_seconds)}"
        )
    return ["One-time costs (not in the per-element figures):", *lines] if lines else []


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


def _runs(stats: Stats) -> str:
    epochs = getattr(stats, "epochs", 1)
    return f" over {epochs} runs (epochs, each an iter(ds))" if epochs > 1 else ""


def render_report(stats: Stats) -> str:
    diagnosis = stats.diagnosis
    lines = [
        f"headrace pipeline report{_runs(stats)}: {stats.produced:,} elements in {stats.elapsed_seconds:.2f} s "
        f"({stats.elements_per_second:,.0f} elements/s to the consumer)",
        diagnosis.summary,
    ]
    if diagnosis.bottleneck is not None:
        stage = stats.stage(diagnosis.bottleneck)
        mapped = stage.vectorised_map  # the batch's time is the map's traced call
        name = stage.name if not mapped else f"{mapped}, vectorised inside {stage.name}"
        lines.append(
            f"Bottleneck: {name}: busy {100 * stage.utilisation:.0f}% of its capacity "
            f"({_workers(stats, stage)}, "
            f"{_per_element(stage.seconds_per_element)} per element)."
        )
    if diagnosis.advice:
        lines.append("What to change:")
        lines.extend(f"  {i}. {item}" for i, item in enumerate(diagnosis.advice, 1))
    tuned = [s for s in stats.stages if s.tuned]
    if tuned:
        lines.append("Autotuned (each decision judged on the consumer's wait in its own tuning round):")
        lines.extend(f"  {s.name}: {s.tuned}" for s in tuned)
    chosen = [s for s in stats.stages if s.executor_reason]
    if chosen:
        lines.append("Executors:")
        lines.extend(f"  {s.name}: {s.executor}: {s.executor_reason}" for s in chosen)
    lines.extend(one_time_lines(stats))
    lines.append("")
    lines.extend(stage_table(stats))
    return "\n".join(lines)
