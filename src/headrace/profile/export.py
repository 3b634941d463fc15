"""Exports of a stats snapshot: a Chrome/Perfetto trace and a self-contained HTML page with SVG plots."""

from __future__ import annotations

import html
import json
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .stats import Stats

_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


#: flow arrows drawn at most (each is two events); slices beyond stay, without arrows
MAX_FLOWS = 20_000


def _tracks(stats: Stats) -> dict[tuple[int, int], tuple[int, str]]:
    """A trace thread id and a readable name for each (process, thread) the recorded slices ran on.

    In the pipeline's process the consumer's thread comes first, then the threads running stages
    (prefetch, interleave readers) and stages' worker threads; a worker process has one track.
    """
    # A thread is named after the outermost stage it calls, or else the stage it works for.
    first: dict[tuple[int, int], tuple[bool, int, float]] = {}  # track -> (worker, stage, start)
    for piece in stats.slices:
        track, rank = (piece.pid, piece.thread), (piece.worker, piece.stage, piece.start)
        if track not in first or rank < first[track]:
            first[track] = rank
    tracks: dict[tuple[int, int], tuple[int, str]] = {}
    workers = 0
    for track, (worker, stage, _) in sorted(first.items(), key=lambda item: item[1]):
        pid, thread = track
        if pid != stats.pid:
            tracks[track] = (thread, f"worker process {pid}")
        elif stage == 0 and not worker and not tracks:
            tracks[track] = (1, "consumer thread")
        else:
            workers += 1
            tracks[track] = (workers + 1, f"worker thread {workers} (runs {stats.stages[stage].name})")
    return tracks


def _process_names(stats: Stats) -> dict[int, str]:
    """A readable name for each process: the pipeline's, then each worker process with its stage."""
    names = {stats.pid: "headrace pipeline"}
    for piece in stats.slices:
        if piece.pid not in names:
            names[piece.pid] = f"worker process {piece.pid} (runs {stats.stages[piece.stage].name})"
    return names


def _flow(
    number: int, source: tuple[int, int], source_ts: float, target: tuple[int, int], target_ts: float
) -> list[dict]:
    """An arrow from the slice around ``source_ts`` on track ``source`` to the one around
    ``target_ts`` on ``target`` (tracks as (trace pid, trace tid))."""
    common = {"name": "element", "cat": "flow", "id": number}
    return [
        {**common, "ph": "s", "pid": source[0], "tid": source[1], "ts": source_ts * 1e6},
        {**common, "ph": "f", "bp": "e", "pid": target[0], "tid": target[1], "ts": target_ts * 1e6},
    ]


def _slice_events(stats: Stats, tracks: dict[tuple[int, int], tuple[int, str]]) -> list[dict]:
    """A slice per recorded call and chunk, and flow arrows where elements cross threads or processes.

    Arrows are exact: a call that handed on the first element of a slice made on another thread or
    process (a worker's chunk, a parallel interleave's read, the call of prefetch's input on its
    thread) recorded that slice's number (``CallLog.deliver``), and the arrow joins the two, one per
    chunk, whatever order the workers finished in. Only a stage that recorded no such link (one
    that does not report its hand-offs, such as a user's own threaded stage) gets the old guess:
    from each chunk, and each input call on another thread, to the first call of the stage ending
    after it.
    """
    events: list[dict] = []
    calls: dict[int, list] = {}  # stage -> its calls, as (end, start, track)
    chunks: dict[int, list] = {}  # stage -> its workers' chunks, likewise
    numbered: dict[int, tuple[float, float, tuple[int, int]]] = {}  # slice number -> (start, end, track)
    links: list[tuple[Any, tuple[int, int]]] = []  # calls that handed on another slice's element
    for piece in stats.slices:
        stage = stats.stages[piece.stage]
        track = (piece.pid, tracks[(piece.pid, piece.thread)][0])
        args: dict[str, Any] = {} if piece.elements is None else {"elements": piece.elements}
        if piece.worker:
            args["work"] = "a chunk computed by a worker"
        events.append(
            {
                "ph": "X",
                "pid": track[0],
                "tid": track[1],
                "ts": piece.start * 1e6,
                "dur": max(piece.end - piece.start, 1e-9) * 1e6,
                "name": stage.name,
                "cat": "worker" if piece.worker else stage.op,
                "args": args,
            }
        )
        (chunks if piece.worker else calls).setdefault(piece.stage, []).append(
            (piece.end, piece.start, track)
        )
        numbered[piece.number] = (piece.start, piece.end, track)
        if piece.delivered:
            links.append((piece, track))
    flows = 0
    linked = set()
    for piece, taker in links:
        linked.add(piece.stage)
        for number in piece.delivered:
            source = numbered.get(number)  # None: dropped by the log's bound, or before iter()
            if source is None or source[2] == taker or flows >= MAX_FLOWS:
                continue
            start, end, track = source
            flows += 1
            events.extend(
                _flow(flows, track, (start + end) / 2, taker, _landing(end, piece.start, piece.end))
            )
    for pieces in (*calls.values(), *chunks.values()):
        pieces.sort()
    for stage in stats.stages:
        if stage.index in linked:
            continue
        takers = calls.get(stage.index, [])
        for producers in (chunks.get(stage.index, []), *(calls.get(child, []) for child in stage.inputs)):
            position = 0
            for end, start, track in producers:
                while position < len(takers) and takers[position][0] < end:
                    position += 1
                if position == len(takers) or flows >= MAX_FLOWS:
                    break
                taker_end, taker_start, taker = takers[position]
                if taker == track:
                    continue
                flows += 1
                events.extend(
                    _flow(flows, track, (start + end) / 2, taker, _landing(end, taker_start, taker_end))
                )
    return events


def _landing(source_end: float, start: float, end: float) -> float:
    """Where an arrow lands in the slice ``start``..``end``: mid-way through its part after the
    source slice ended (the element cannot be handed on before it was made)."""
    return (min(max(start, source_end), end) + end) / 2


def trace_events(stats: Stats) -> dict:
    """A Chrome/Perfetto trace: each recorded call as a slice on its thread and each worker chunk on
    its worker's thread or process (``record_calls``), arrows where elements cross threads or
    processes, startup, and counter tracks per stage."""
    pid = stats.pid
    tracks = _tracks(stats)
    events: list[dict] = []
    for number, (process, name) in enumerate(_process_names(stats).items()):
        events.append({"ph": "M", "pid": process, "name": "process_name", "args": {"name": name}})
        events.append(
            {"ph": "M", "pid": process, "name": "process_sort_index", "args": {"sort_index": number}}
        )
    consumer_tid = next((tid for (p, _), (tid, name) in tracks.items() if name == "consumer thread"), 1)
    for (process, _), (tid, name) in tracks.items():
        events.append({"ph": "M", "pid": process, "tid": tid, "name": "thread_name", "args": {"name": name}})
        events.append(
            {"ph": "M", "pid": process, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}}
        )
    if not any(name == "consumer thread" for _, name in tracks.values()):
        events.append(
            {"ph": "M", "pid": pid, "tid": 1, "name": "thread_name", "args": {"name": "consumer thread"}}
        )
    events.append(
        {
            "ph": "X",
            "pid": pid,
            "tid": consumer_tid,
            "ts": 0,
            "dur": max(stats.startup_seconds, 1e-9) * 1e6,
            "name": "iter(): building the pipeline",
            "cat": "startup",
            "args": {},
        }
    )
    if stats.first_element_seconds is not None:
        events.append(
            {
                "ph": "i",
                "s": "p",
                "pid": pid,
                "tid": consumer_tid,
                "ts": stats.first_element_seconds * 1e6,
                "name": "first element",
            }
        )
    events.extend(_slice_events(stats, tracks))
    timeline = stats.timeline
    for t, rate in timeline.rates():
        events.append(
            {"ph": "C", "pid": pid, "ts": t * 1e6, "name": "consumer", "args": {"elements/s": rate}}
        )
    for t, share in timeline.wait_fractions():
        events.append(
            {"ph": "C", "pid": pid, "ts": t * 1e6, "name": "consumer", "args": {"wait share": share}}
        )
    for stage in stats.stages:
        for what, key in ((0, "elements/s"), (1, "busy share"), (2, "buffered")):
            if what == 2 and not stage.buffer_capacity:
                continue
            for t, value in timeline.stage_series(stage.index, what):
                events.append(
                    {"ph": "C", "pid": pid, "ts": t * 1e6, "name": stage.name, "args": {key: value}}
                )
    totals = {
        s.name: {
            "produced": s.produced,
            "busy_seconds": s.busy_seconds,
            "one_time_seconds": s.one_time_seconds,
        }
        for s in stats.stages
    }
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {"report": stats.report(), "stages": json.dumps(totals)},
    }


def _nice_ticks(top: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least ``top`` (1, 2, 2.5 or 5 times a power of ten apart)."""
    top = top if top > 0 else 1.0
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return [step * i for i in range(int(math.ceil(top / step - 1e-9)) + 1)]


def _fmt(value: float, unit: str = "") -> str:
    if unit == "%":
        return f"{100 * value:.0f}%"
    if value >= 1e6:
        return f"{value / 1e6:.3g}M"
    if value >= 1e3:
        return f"{value / 1e3:.3g}k"
    return f"{value:.3g}"


_W, _H, _LEFT, _RIGHT, _TOP, _BOTTOM = 640, 230, 64, 16, 12, 40


def _axes(x_max: float, y_ticks: list[float], unit: str, y_label: str) -> tuple[list[str], Any, Any]:
    plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    y_top = y_ticks[-1] or 1.0
    x_ticks = _nice_ticks(x_max, 6)
    x_top = x_ticks[-1] or 1.0

    def sx(x: float) -> float:
        return _LEFT + plot_w * x / x_top

    def sy(y: float) -> float:
        return _TOP + plot_h * (1 - min(y, y_top) / y_top)

    parts = []
    for y in y_ticks:
        parts.append(
            f'<line x1="{_LEFT}" y1="{sy(y):.1f}" x2="{_LEFT + plot_w}" y2="{sy(y):.1f}" class="grid"/>'
        )
        parts.append(f'<text x="{_LEFT - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{_fmt(y, unit)}</text>')
    for x in x_ticks:
        parts.append(
            f'<line x1="{sx(x):.1f}" y1="{_TOP + plot_h}" x2="{sx(x):.1f}" y2="{_TOP + plot_h + 4}" class="axis"/>'
        )
        parts.append(f'<text x="{sx(x):.1f}" y="{_TOP + plot_h + 16}" text-anchor="middle">{x:g}</text>')
    parts.append(
        f'<line x1="{_LEFT}" y1="{_TOP + plot_h}" x2="{_LEFT + plot_w}" y2="{_TOP + plot_h}" class="axis"/>'
    )
    parts.append(f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_TOP + plot_h}" class="axis"/>')
    parts.append(
        f'<text x="{_LEFT + plot_w / 2:.0f}" y="{_H - 6}" text-anchor="middle">seconds since iter()</text>'
    )
    parts.append(
        f'<text transform="translate(13 {_TOP + plot_h / 2:.0f}) rotate(-90)" text-anchor="middle">{html.escape(y_label)}</text>'
    )
    return parts, sx, sy


def _svg(title: str, body: list[str], width: int = _W, height: int = _H) -> str:
    return (
        f'<svg class="plot" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{html.escape(title)}">{"".join(body)}</svg>'
    )


def _figure(title: str, svg: str, note: str = "", legend: str = "") -> str:
    note_html = f'<p class="note">{note}</p>' if note else ""
    return f"<figure><figcaption>{html.escape(title)}</figcaption>{svg}{legend}{note_html}</figure>"


def _empty(title: str) -> str:
    return f'<figure><figcaption>{html.escape(title)}</figcaption><p class="empty">not enough samples yet</p></figure>'


def _line_chart(
    title: str,
    series: list[tuple[str, list[tuple[float, float]]]],
    y_label: str,
    unit: str = "",
    x_max: float = 0.0,
    shade: tuple[float, float] | None = None,
    note: str = "",
    y_top: float | None = None,
) -> str:
    points = [p for _, data in series for p in data]
    if not points:
        return _empty(title)
    x_max = max(x_max, max(x for x, _ in points))
    ticks = _nice_ticks(y_top if y_top is not None else max(y for _, y in points), 4)
    parts, sx, sy = _axes(x_max, ticks, unit, y_label)
    if shade is not None and shade[1] > shade[0]:
        parts.insert(
            0,
            f'<rect x="{sx(shade[0]):.1f}" y="{_TOP}" width="{max(1.0, sx(shade[1]) - sx(shade[0])):.1f}" '
            f'height="{_H - _TOP - _BOTTOM}" class="startup"><title>startup: iter() until the first element</title></rect>',
        )
    legend = []
    for i, (name, data) in enumerate(series):
        colour = _COLOURS[i % len(_COLOURS)]
        # Steps, not slopes: each value holds for the interval it was measured over.
        path, previous = [], None
        for x, y in data:
            if previous is not None:
                path.append(f"{sx(previous):.1f},{sy(y):.1f}")
            path.append(f"{sx(x):.1f},{sy(y):.1f}")
            previous = x
        if len(path) == 1:
            path.insert(0, f"{sx(0):.1f},{sy(data[0][1]):.1f}")
        parts.append(
            f'<polyline class="series" fill="none" stroke="{colour}" stroke-width="1.6" points="{" ".join(path)}"/>'
        )
        legend.append(f'<span style="color:{colour}">&#9632;</span> {html.escape(name)}')
    legend_html = f'<div class="legend">{" &nbsp; ".join(legend)}</div>' if len(series) > 1 else ""
    return _figure(title, _svg(title, parts), note, legend_html)


def _label(name: str, limit: int) -> str:
    """A stage name cut to ``limit`` characters (the full name shows on hover)."""
    short = name if len(name) <= limit else name[: limit - 1] + "…"
    return f"{html.escape(short)}<title>{html.escape(name)}</title>"


_LABEL_CHARS = 40  # about 7.3px each at 12px sans-serif: 40 characters fit the 320px label column


def _waterfall(stats: Stats) -> str:
    """One row per stage, output first: how busy it was in each interval (darker = busier)."""
    title = "Where the time went: each stage's busy share over time"
    samples = stats.timeline.samples
    if len(samples) < 2 or not stats.stages:
        return _empty(title)
    label_w, row, width = 320, 22, 980
    plot_w = width - label_w - 20
    x_top = _nice_ticks(max(samples[-1].seconds, stats.elapsed_seconds) or 1.0, 8)[-1] or 1.0
    height = _TOP + row * len(stats.stages) + 36

    def sx(x: float) -> float:
        return label_w + plot_w * x / x_top

    parts = []
    for stage in stats.stages:
        y = _TOP + stage.index * row
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end">{"  " * 0}{_label(stage.name, _LABEL_CHARS)}</text>'
        )
        parts.append(f'<rect x="{label_w}" y="{y + 2}" width="{plot_w}" height="{row - 4}" class="lane"/>')
        workers = dict(stats.timeline.stage_series(stage.index, 3))
        for t, busy in stats.timeline.stage_series(stage.index, 1):
            start = max((s.seconds for s in samples if s.seconds < t), default=0.0)
            share = min(1.0, busy / max(workers.get(t, stage.parallelism), 1))
            if share < 0.01:
                continue
            parts.append(
                f'<rect class="series" x="{sx(start):.1f}" y="{y + 2}" width="{max(0.8, sx(t) - sx(start)):.1f}" '
                f'height="{row - 4}" fill="#d62728" fill-opacity="{0.15 + 0.85 * share:.2f}">'
                f"<title>{html.escape(stage.name)}: {100 * share:.0f}% busy at {t:.2f} s</title></rect>"
            )
    axis_y = _TOP + row * len(stats.stages)
    for x in _nice_ticks(x_top, 8):
        parts.append(
            f'<line x1="{sx(x):.1f}" y1="{axis_y}" x2="{sx(x):.1f}" y2="{axis_y + 4}" class="axis"/>'
        )
        parts.append(f'<text x="{sx(x):.1f}" y="{axis_y + 16}" text-anchor="middle">{x:g}</text>')
    parts.append(
        f'<text x="{label_w + plot_w / 2:.0f}" y="{axis_y + 31}" text-anchor="middle">seconds since iter()</text>'
    )
    if not any('class="series"' in part for part in parts):
        parts.append(f'<rect class="series" x="{label_w}" y="{_TOP}" width="0.5" height="0.5" fill="none"/>')
    note = "Busy share: time in the stage itself (its inputs excluded) over the time its workers had. Hover for values."
    return _figure(title, _svg(title, parts, width, height), note)


def _stage_bars(stats: Stats) -> str:
    """Each stage's own time over the run, with one-time costs (first call) stacked after it."""
    title = "Time spent in each stage (its inputs excluded)"
    label_w, row, width = 320, 24, 980
    bars_w = width - label_w - 230
    top = max((s.busy_seconds + s.one_time_seconds for s in stats.stages), default=0.0) or 1.0
    parts = []
    for stage in stats.stages:
        y = 6 + stage.index * row
        steady = bars_w * stage.busy_seconds / top
        once = bars_w * stage.one_time_seconds / top
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end">{_label(stage.name, _LABEL_CHARS)}</text>'
        )
        parts.append(
            f'<rect class="series" x="{label_w}" y="{y + 3}" width="{max(steady, 1):.1f}" height="{row - 8}" fill="#1f77b4"/>'
        )
        if once >= 0.5:
            parts.append(
                f'<rect x="{label_w + steady:.1f}" y="{y + 3}" width="{once:.1f}" height="{row - 8}" fill="#ff7f0e">'
                f"<title>one-time: {stage.one_time_seconds:.3f} s</title></rect>"
            )
        text = f"{stage.busy_seconds:.3f} s, {100 * stage.utilisation:.0f}% busy"
        if stage.one_time_seconds:
            text += f" + {stage.one_time_seconds:.3f} s once"
        parts.append(f'<text x="{label_w + steady + once + 6:.1f}" y="{y + 15}">{html.escape(text)}</text>')
    height = 12 + row * len(stats.stages)
    legend = (
        '<div class="legend"><span style="color:#1f77b4">&#9632;</span> steady work &nbsp; '
        '<span style="color:#ff7f0e">&#9632;</span> one-time (first call: compile, open, fill)</div>'
    )
    return _figure(title, _svg(title, parts, width, height), legend=legend)


def _tuning(stats: Stats) -> str:
    title = "Autotuner: workers in use per stage over time"
    tuned = [s for s in stats.stages if s.parallelism > 1 or s.tuned]
    series = [(s.name, stats.timeline.stage_series(s.index, 3)) for s in tuned]
    if not any(data for _, data in series):
        return ""
    decisions = "".join(
        f"<li><b>{html.escape(s.name)}</b>: {html.escape(s.tuned)}</li>" for s in tuned if s.tuned
    )
    note = f"<ul>{decisions}</ul>" if decisions else ""
    return _line_chart(title, series, "workers", note=note)


def _cards(stats: Stats) -> str:
    diagnosis = stats.diagnosis
    cards = [
        ("elements/s to the consumer", f"{stats.elements_per_second:,.0f}"),
        ("consumer waited", f"{100 * stats.wait_fraction:.0f}%"),
        ("verdict", "input-bound" if diagnosis.input_bound else "not input-bound"),
        ("bottleneck", diagnosis.bottleneck or "-"),
        ("startup (iter() to first element)", f"{stats.first_element_seconds or 0:.3f} s"),
        ("elapsed", f"{stats.elapsed_seconds:.2f} s"),
    ]
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card"><div class="k">{html.escape(k)}</div><div class="v" title="{html.escape(v)}">{html.escape(v)}</div></div>'
            for k, v in cards
        )
        + "</div>"
    )


_SCRIPT = """
// Marks the page once every plot has laid out: how many drew data, and how many labels stick out
// of their plot (what the screenshot test checks).
window.addEventListener('load', function () {
  var plots = document.querySelectorAll('svg.plot');
  var drawn = 0, clipped = [];
  plots.forEach(function (svg) {
    var box = svg.getBBox();
    var series = svg.querySelectorAll('.series');
    if (box.width > 0 && box.height > 0 && series.length > 0) { drawn += 1; }
    var frame = svg.getBoundingClientRect();
    svg.querySelectorAll('text').forEach(function (text) {
      var r = text.getBoundingClientRect();
      if (r.left < frame.left - 0.5 || r.right > frame.right + 0.5 || r.top < frame.top - 0.5 ||
          r.bottom > frame.bottom + 0.5) { clipped.push(text.textContent); }
    });
  });
  document.body.setAttribute('data-plots', String(plots.length));
  document.body.setAttribute('data-plots-rendered', String(drawn));
  document.body.setAttribute('data-clipped-labels', String(clipped.length));
  document.body.setAttribute('data-clipped-text', clipped.slice(0, 5).join(' | '));
});
"""

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222; max-width: 1320px; }
h1 { font-size: 22px; margin: 0 0 12px; }
h2 { font-size: 16px; margin: 22px 0 6px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin-bottom: 14px; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 8px 12px; min-width: 150px; max-width: 420px; }
.card .k { font-size: 12px; color: #666; }
.card .v { font-size: 18px; font-weight: 600; overflow-wrap: anywhere; }
pre { background: #f6f6f6; padding: 12px; white-space: pre-wrap; font-size: 12.5px; border-radius: 6px; }
figure { display: inline-block; margin: 8px 12px 8px 0; vertical-align: top; }
figcaption { font-weight: 600; margin-bottom: 4px; font-size: 14px; }
svg.plot { font-size: 12px; font-family: inherit; background: #fff; overflow: visible; }
svg.plot .axis { stroke: #444; } svg.plot .grid { stroke: #e6e6e6; }
svg.plot .lane { fill: #f4f4f4; } svg.plot .startup { fill: #ffe9c7; }
.legend { font-size: 12px; margin-top: 2px; } .note { font-size: 12px; color: #555; max-width: 960px; margin: 2px 0; }
"""


def html_page(stats: Stats) -> str:
    timeline = stats.timeline
    first = stats.first_element_seconds
    shade = (0.0, first) if first else None
    x_max = stats.elapsed_seconds
    buffered = [(s.name, timeline.stage_series(s.index, 2)) for s in stats.stages if s.buffer_capacity]
    startup_note = "Shaded: startup, from iter() to the first element." if shade else ""
    figures = [
        _line_chart(
            "Throughput to the consumer",
            [("elements/s", timeline.rates())],
            "elements/s",
            x_max=x_max,
            shade=shade,
            note=startup_note,
        ),
        _line_chart(
            "Consumer wait: share of each interval spent waiting for data",
            [("wait share", timeline.wait_fractions())],
            "waiting",
            unit="%",
            x_max=x_max,
            shade=shade,
            y_top=1.0,
            note="Near 100%: the pipeline is the bottleneck. Near 0%: the training step is.",
        ),
        _waterfall(stats),
        _stage_bars(stats),
        _line_chart("Buffer occupancy", buffered, "elements", x_max=x_max) if buffered else "",
        _tuning(stats),
    ]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>headrace pipeline report</title>
<style>{_STYLE}</style></head>
<body>
<h1>headrace pipeline report</h1>
{_cards(stats)}
<pre>{html.escape(stats.report())}</pre>
{"".join(figures)}
<script>{_SCRIPT}</script>
</body></html>
"""
