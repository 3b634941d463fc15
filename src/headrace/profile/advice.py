"""Find the bottleneck stage and say what to change, from measured counters only."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .stats import StageStats, Stats

#: the consumer counts as input-bound when it waits at least this share of its time
INPUT_BOUND_WAIT = 0.10
#: a user function cheaper than this per call is dominated by per-call overhead: vectorise it
CHEAP_CALL_SECONDS = 30e-6
#: a stage with workers busy at least this share of their capacity is judged by how they work
MOSTLY_BUSY = 0.5
#: worker threads that waited for a core more than this share of their busy time: too busy to judge
BUSY_MACHINE = 0.5
#: a shuffle buffer above this many bytes is worth shrinking
LARGE_BUFFER_BYTES = 256 * 2**20


@dataclass
class Diagnosis:
    input_bound: bool
    bottleneck: str | None
    summary: str
    advice: list[str] = field(default_factory=list)


def _downstream(stats: Stats, stage: StageStats) -> list[StageStats]:
    """Stages that consume ``stage``'s output, nearest first."""
    parents = {child: s.index for s in stats.stages for child in s.inputs}
    out, index = [], stage.index
    while index in parents:
        index = parents[index]
        out.append(stats.stages[index])
    return out


def _upstream(stats: Stats, stage: StageStats) -> list[StageStats]:
    out, stack = [], list(stage.inputs)
    while stack:
        s = stats.stages[stack.pop()]
        out.append(s)
        stack.extend(s.inputs)
    return out


def gil_bound(stats: Stats, stage: StageStats) -> str | None:
    """Why threads cannot run ``stage`` in parallel, or None: the GIL share measured when the
    executor was chosen, else (or when that share was low) the thread workers' CPU time: under the
    GIL they use about one core together, however many there are. Time the workers sat waiting for a
    core that another program had (``run_delay_seconds``, from /proc) is taken out first, so a busy
    machine is not mistaken for the GIL; work waiting on I/O uses little CPU per busy second."""
    if stage.executor != "thread" or stage.parallelism < 2:
        return None
    if stage.gil_held_fraction is not None and stage.gil_held_fraction > 0.5:
        return f"holds the GIL {100 * stage.gil_held_fraction:.0f}% of each call"
    if not stage.cpu_seconds or not stage.busy_seconds or stats.elapsed_seconds <= 0:
        return None
    if stage.produced < 4 * stage.parallelism:
        return None  # too few calls to tell the GIL from startup (the README's 5 batches once were)
    delay = stage.run_delay_seconds
    if delay is None and stage.utilisation < MOSTLY_BUSY:
        # Idle workers, and no /proc to tell a busy machine from the GIL: a call that got half a
        # core looks like one that waited half its time for the GIL. No verdict from so little.
        return None
    delay = delay or 0.0
    if delay > BUSY_MACHINE * stage.busy_seconds:
        return None  # mostly waiting for a core: the CPU time cannot tell (see uncertain_gil)
    running = stage.busy_seconds - delay
    # Cores used while the workers were busy and had a core: threads that take turns under the GIL
    # use about one together, however many there are.
    cores_used = stage.cpu_seconds * stage.parallelism / running
    cpu_share = stage.cpu_seconds / running
    if cores_used < 1.2 and cpu_share >= 0.2 and (os.cpu_count() or 1) > 1:
        return (
            f"uses only {cores_used:.1f} cores on {stage.parallelism} threads while the consumer waits, "
            "so the calls hold the GIL and take turns"
        )
    return None


def uncertain_gil(stage: StageStats) -> str | None:
    """Advice for a stage on threads (or inline) whose GIL share could not be told, or None: the
    probe's pairs disagreed, or its workers waited for a core more than they ran (a busy machine:
    a thread waiting for the GIL then waits for a core too, so neither measurement can tell)."""
    if stage.executor not in ("thread", "inline") or not stage.calls_user_function:
        return None
    try_processes = "If the function is mostly pure Python, pass executor='process' and compare."
    spread = stage.gil_range
    if spread:
        low, high = spread
        return (
            f"Whether {stage.name} holds the GIL is uncertain: the measurements disagreed ({100 * low:.0f}-"
            f"{100 * high:.0f}% of a call; the machine was busy), so {stage.executor} was kept. "
            + try_processes
        )
    delay = stage.run_delay_seconds
    if stage.executor == "thread" and stage.parallelism >= 2 and delay and stage.busy_seconds:
        if delay > BUSY_MACHINE * stage.busy_seconds and (stage.gil_held_fraction or 0.0) <= 0.5:
            return (
                f"Whether {stage.name} holds the GIL is uncertain: its threads waited for a core "
                f"{delay:.1f} s (other programs kept the cores busy), more than half their "
                f"{stage.busy_seconds:.1f} s in the function. " + try_processes
            )
    return None


def _micro(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs" if seconds < 0.01 else f"{seconds * 1e3:,.1f} ms"


def _stage_advice(stats: Stats, stage: StageStats) -> list[str]:
    advice = []
    per_call = stage.seconds_per_element
    downstream_ops = [s.op for s in _downstream(stats, stage)]
    if stage.calls_user_function:
        gil = gil_bound(stats, stage)
        uncertain = uncertain_gil(stage)
        if gil is not None:
            advice.append(f"{stage.name} {gil}: pass executor='process' to run it in worker processes.")
        elif uncertain is not None:
            advice.append(uncertain)
        elif stage.parallelism <= 1 and not stage.tuned:
            # an AUTOTUNE stage the tuner kept at one worker has its reason under "Autotuned"
            advice.append(
                f"Run {stage.name} in parallel: pass num_parallel_calls=hr.AUTOTUNE (or the number of cores); "
                f"it spends {_micro(per_call)} per element on one worker."
            )
        elif stage.utilisation > 0.9:
            advice.append(
                f"{stage.name} keeps all {stage.parallelism} workers busy: it needs more CPU than the machine "
                "has; make the function cheaper or move work offline (preprocess once, then cache)."
            )
        if per_call < CHEAP_CALL_SECONDS and "batch" in downstream_ops and stage.op == "map":
            advice.append(
                f"Each call of {stage.name} costs only {_micro(per_call)}, so Python's per-call overhead dominates: "
                "batch before this map and write the function over whole batches (vectorise it with numpy)."
            )
        if not stage.reorders and not any(s.reorders for s in _upstream(stats, stage)):
            advice.append(
                f"If the data fits in memory (or on local disk) and you train for more than one epoch, add "
                f".cache() right after {stage.name}: later epochs then skip it and everything before it."
            )
    elif stage.reads_input or not stage.inputs:
        advice.append(
            f"Reading in {stage.name} is the slowest part: read several files at once with "
            "interleave(..., num_parallel_calls=hr.AUTOTUNE) or TFRecordDataset(..., num_parallel_reads=hr.AUTOTUNE), "
            "and add .prefetch(hr.AUTOTUNE) at the end so reading overlaps training."
        )
    elif stage.op == "batch" and stage.vectorised_map:
        mapped = stage.vectorised_map
        advice.append(
            f"{mapped} runs vectorised inside {stage.name}, one traced call per batch "
            f"({_micro(per_call)} per batch), and is the slowest part. It runs in one thread (image "
            "decoders use num_parallel_calls threads of their own): to use more cores, run copies of the "
            f"pipeline in processes with .parallelize(N) after {stage.name}."
        )
    elif stage.op == "batch":
        advice.append(
            f"Stacking in {stage.name} is the slowest part ({_micro(per_call)} per batch): make elements numpy "
            "arrays of fixed shape before batching (stacking Python objects is slow)."
        )
    if "prefetch" not in {s.op for s in stats.stages} and stats.steady_wait_fraction >= INPUT_BOUND_WAIT:
        advice.append(
            "Add .prefetch(hr.AUTOTUNE) as the last stage so the pipeline works while the model trains."
        )
    return advice


def _memory_advice(stats: Stats) -> list[str]:
    advice = []
    for shuffle in (s for s in stats.stages if s.op == "shuffle"):
        if not shuffle.buffer_bytes or shuffle.buffer_bytes < LARGE_BUFFER_BYTES:
            continue
        for stage in _upstream(stats, shuffle):
            size_in, size_out = stage.bytes_in_per_element, stage.bytes_out_per_element
            if stage.op == "map" and size_in and size_out and size_out > 2 * size_in:
                factor = size_out / size_in
                advice.append(
                    f"{shuffle.name} holds {shuffle.buffer_bytes / 2**20:,.0f} MiB because {stage.name} makes elements "
                    f"{factor:.1f}x larger before it: move that map after the shuffle to cut the buffer's memory "
                    f"about {factor:.0f}x."
                )
        for stage in _downstream(stats, shuffle):
            size_in, size_out = stage.bytes_in_per_element, stage.bytes_out_per_element
            if stage.op == "map" and size_in and size_out and size_out * 2 < size_in:
                factor = size_in / size_out
                advice.append(
                    f"{shuffle.name} holds {shuffle.buffer_bytes / 2**20:,.0f} MiB of elements that {stage.name} later "
                    f"shrinks {factor:.1f}x: move that map before the shuffle to cut the buffer's memory."
                )
    return advice


def diagnose(stats: Stats) -> Diagnosis:
    working = [s for s in stats.stages if s.busy_seconds > 0]
    if stats.produced == 0 or not working:
        return Diagnosis(False, None, "No element has been produced yet, so there is nothing to measure.")
    bottleneck = max(working, key=lambda s: (s.utilisation, s.busy_seconds))
    # Judged after the first element: startup is a one-time cost with a line of its own, and on a
    # short run it would make every pipeline look input-bound.
    input_bound = stats.steady_wait_fraction >= INPUT_BOUND_WAIT
    wait = f"{100 * stats.wait_fraction:.0f}% of its time ({stats.consumer_wait_seconds:.2f} s)"
    first = stats.first_element_seconds
    if first is not None and first >= 0.01:
        wait += (
            f"; {first:.2f} s of it was startup before the first element, "
            f"{100 * stats.steady_wait_fraction:.0f}% of the time after it"
        )
    if input_bound:
        summary = f"Input-bound: the training loop waited for data {wait}."
        advice = _stage_advice(stats, bottleneck)
    else:
        summary = (
            f"Not input-bound: the training loop waited only {wait}, so the pipeline keeps up. The stage that "
            "would limit a faster training step is named below."
        )
        advice = []
    advice.extend(_memory_advice(stats))
    return Diagnosis(input_bound, bottleneck.name, summary, advice)
