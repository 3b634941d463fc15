"""The autotuner that runs inside an iterator: measure, plan (see :mod:`.model`), apply, explain.

It runs from the consumer's own ``next()`` calls, at most every :data:`INTERVAL_SECONDS` (no thread of
its own), on the stages whose knobs were left to ``AUTOTUNE``. A stage exposes its knobs with
``tunable_knobs()`` (name -> (current, maximum)) and ``set_knob(name, value)``. Every decision keeps
its reason; ``Stats.report()`` prints them and ``Stats.tuned_config()`` exports the values, which
``options.autotune.tuned_config`` applies unchanged to freeze a tuned pipeline.
"""

from __future__ import annotations

import time
import warnings
from typing import Any, cast

from ..core.counters import StageCounters, busy_seconds
from ..core.errors import user_stacklevel
from ..core.naming import without_locations
from ..core.node import NodeIterator
from ..core.options import Options
from ..core.structure import flatten
from .budget import cpu_budget, ram_budget
from .model import MAX_BUFFER, Decision, StageMeasure, plan

INTERVAL_SECONDS = 0.25
FIRST_INTERVALS = (0.03, 0.05, 0.08, 0.12)  # quick first rounds: most runs are decided in their first second
MIN_ELEMENTS = 8  # the consumer's elements before the first decision: costs need a few samples
# A stage that grew must raise the consumer's rate by this factor by the next round, or it goes back
# (more workers than help cost memory, GIL hand-offs and cache misses): grow while throughput rises.
MIN_GAIN = 1.05
# ... judged only when the consumer waited at least this share of the round: when it barely waited
# the pipeline kept up, and a flat rate says nothing about the stage (unless the rate clearly fell).
WAIT_TO_JUDGE = 0.1
CLEAR_DROP = 0.8
RETRY_ROUNDS = 8  # rounds before growing past a ceiling again (conditions change); doubles each failure


def _nbytes(element: Any) -> int:
    return sum(
        getattr(leaf, "nbytes", len(leaf) if isinstance(leaf, bytes) else 8) for leaf in flatten(element)
    )


class Tuner:
    def __init__(self, stages: list[NodeIterator], options: Options):
        self.options = options.autotune
        # Stages opt in by overriding NodeIterator.tunable_knobs (none by default).
        self.stages = [s for s in stages if s.tunable_knobs()]
        self.cpu_budget = cpu_budget(self.options)
        self.ram_budget = ram_budget(self.options)
        self.decisions: dict[str, list[Decision]] = {}
        self.rounds = 0
        self.frozen = self.options.tuned_config is not None
        # (consumer produced, consumer wait, elapsed) at the previous round
        self._last: tuple[int, float, float] | None = None
        self._last_cpu = time.process_time()  # CPU seconds of the whole process: saturation shows here
        self.element_bytes: dict[str, float] = {}
        # Hill climbing on the measured rate: stage -> (value before it grew, rate then).
        self._trials: dict[str, tuple[int, float]] = {}
        self._ceilings: dict[str, tuple[int, int, int]] = {}  # stage -> (value, until round, backoff)
        self._ceiling_reasons: dict[str, str] = {}
        if self.options.tuned_config is not None:  # self.frozen
            self._apply_frozen(self.options.tuned_config)

    @property
    def active(self) -> bool:
        return bool(self.stages) and self.options.enabled and not self.frozen

    def _apply_frozen(self, config: dict) -> None:
        # A key names its stage with the functions' file:line; after an edit elsewhere in the file the
        # line moved, so a key also matches the one stage with the same name less locations.
        by_name = {stage.name: stage for stage in self.stages}
        loose: dict[str, list] = {}
        for stage in self.stages:
            loose.setdefault(without_locations(stage.name), []).append(stage)
        matched: list[tuple[NodeIterator, dict]] = []
        unmatched: list[str] = []
        for key, values in config.items():
            found = by_name.get(key)
            if found is None:
                candidates = loose.get(without_locations(key), [])
                found = candidates[0] if len(candidates) == 1 else None
            if found is None:
                unmatched.append(key)
            else:
                matched.append((found, values))
        if unmatched:
            warnings.warn(
                f"options.autotune.tuned_config names stages this pipeline does not have: {unmatched}; "
                f"its tunable stages are {sorted(by_name)}. Those values are not applied: export the "
                "config again with it.stats().tuned_config()",
                RuntimeWarning,
                stacklevel=user_stacklevel(),
            )
        for stage, values in matched:
            for knob, value in values.items():
                if knob in stage.tunable_knobs():
                    stage.set_knob(knob, int(value))
                    self.decisions.setdefault(stage.name, []).append(
                        Decision(stage.name, knob, int(value), "frozen by options.autotune.tuned_config")
                    )

    def step(self, produced: int, wait_seconds: float, elapsed: float, last_element: Any = None) -> None:
        """One round: called by the iterator with its consumer counters."""
        if not self.active or produced < MIN_ELEMENTS:
            return
        if self._last is not None:
            d_produced = produced - self._last[0]
            d_wait = wait_seconds - self._last[1]
            d_elapsed = elapsed - self._last[2]
        else:
            d_produced, d_wait, d_elapsed = produced, wait_seconds, elapsed
        self._last = (produced, wait_seconds, elapsed)
        cpu_now = time.process_time()
        d_cpu = cpu_now - self._last_cpu
        cpu_utilisation = d_cpu / d_elapsed / self.cpu_budget if d_elapsed > 0 else 0.0
        self._last_cpu = cpu_now
        if d_produced <= 0 or d_elapsed <= 0:
            return
        wait_fraction = min(1.0, d_wait / d_elapsed)
        rate = d_produced / d_elapsed
        reverted = self._judge_trials(rate, wait_fraction)
        consumer_seconds = max(0.0, d_elapsed - d_wait) / d_produced  # the training step's own pace
        measures = []
        for stage in self.stages:
            counters = stage.counters()
            knobs = stage.tunable_knobs()
            made = max(1, counters.get("produced", 0))
            if "parallelism" in knobs:
                current, maximum = knobs["parallelism"]
                ceiling = self._ceilings.get(stage.name)
                if ceiling is not None and self.rounds < ceiling[1]:
                    maximum = min(maximum, max(current, ceiling[0]))
                gil_fraction = counters.get("gil_held_fraction")
                measures.append(
                    StageMeasure(
                        stage.name,
                        "parallel",
                        # counters() is typed as a plain dict in core; its keys are StageCounters'.
                        busy_seconds(cast(StageCounters, counters)) / made,
                        made / max(1, produced),
                        current,
                        maximum,
                        gil_bound=counters.get("executor") == "thread"
                        and gil_fraction is not None
                        and gil_fraction > 0.5,
                        cpu_seconds_per_element=counters["cpu_seconds"] / made
                        if "cpu_seconds" in counters
                        else None,
                    )
                )
            if "buffer_size" in knobs:
                current, maximum = knobs["buffer_size"]
                if last_element is not None and stage.name not in self.element_bytes:
                    self.element_bytes[stage.name] = float(_nbytes(last_element))
                measures.append(
                    StageMeasure(
                        stage.name,
                        "buffer",
                        0.0,
                        1.0,
                        current,
                        min(maximum, MAX_BUFFER),
                        element_bytes=self.element_bytes.get(stage.name, 0.0),
                    )
                )
        result = plan(
            measures,
            self.cpu_budget,
            self.ram_budget,
            consumer_seconds or None,
            wait_fraction,
            cpu_utilisation,
            d_cpu / d_produced if d_produced > 0 else None,
        )
        self.rounds += 1
        by_name = {s.name: s for s in self.stages}
        for decision in result.decisions:
            stage = by_name[decision.name]
            if decision.name in reverted and decision.knob == "parallelism":
                decision = reverted[decision.name]
            elif decision.knob == "parallelism" and self._held(decision.name, decision.value):
                decision = Decision(
                    decision.name, decision.knob, decision.value, self._ceiling_reasons[decision.name]
                )
            knob = stage.tunable_knobs().get(decision.knob)
            if knob is None:  # the stage gave the knob up since (a map that went inline)
                continue
            current = knob[0]
            if current != decision.value:
                stage.set_knob(decision.knob, decision.value)
                if decision.knob == "parallelism" and decision.value > current:
                    self._trials[decision.name] = (current, rate)
            self.decisions[decision.name] = [
                d for d in self.decisions.get(decision.name, []) if d.knob != decision.knob
            ] + [decision]

    def _judge_trials(self, rate: float, wait_fraction: float) -> dict[str, Decision]:
        """Stages that grew last round without raising the rate go back; returns their decisions."""
        reverted: dict[str, Decision] = {}
        by_name = {s.name: s for s in self.stages}
        for name, (before, rate_before) in self._trials.items():
            stage = by_name[name]
            knob = stage.tunable_knobs().get("parallelism")
            if knob is None:  # the stage gave the knob up since (a map that went inline): nothing to undo
                continue
            grown = knob[0]
            flat = rate < rate_before * MIN_GAIN and wait_fraction >= WAIT_TO_JUDGE
            if not (flat or rate < rate_before * CLEAR_DROP) or grown <= before:
                continue
            backoff = 2 * self._ceilings[name][2] if name in self._ceilings else RETRY_ROUNDS
            self._ceilings[name] = (before, self.rounds + backoff, backoff)
            stage.set_knob("parallelism", before)
            self._ceiling_reasons[name] = (
                f"{grown} workers gave {rate:,.0f} elements/s, {before} gave {rate_before:,.0f}: kept {before} "
                f"(more workers did not raise the rate; tried again in {backoff} rounds)"
            )
            reverted[name] = Decision(name, "parallelism", before, self._ceiling_reasons[name])
        self._trials.clear()
        return reverted

    def _held(self, name: str, value: int) -> bool:
        """Whether ``value`` is where a ceiling stopped the stage's growth."""
        ceiling = self._ceilings.get(name)
        return ceiling is not None and self.rounds <= ceiling[1] and value == ceiling[0]

    def next_interval(self) -> float:
        """Seconds until the next round: short at first, then :data:`INTERVAL_SECONDS`."""
        return FIRST_INTERVALS[self.rounds] if self.rounds < len(FIRST_INTERVALS) else INTERVAL_SECONDS

    def explanation(self) -> dict[str, str]:
        """Stage name -> 'knob=value: reason; ...' for the report."""
        return {
            name: "; ".join(f"{d.knob}={d.value}: {d.reason}" for d in decisions)
            for name, decisions in self.decisions.items()
        }

    def config(self) -> dict[str, dict[str, int]]:
        """The current values of every tuned knob, for ``options.autotune.tuned_config``."""
        return {
            stage.name: {knob: value[0] for knob, value in stage.tunable_knobs().items()}
            for stage in self.stages
        }
