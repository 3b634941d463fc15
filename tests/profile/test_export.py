import json
import os
import re
import shutil
import subprocess
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr


def stats_of_a_run():
    def decode(x):
        time.sleep(0.001)
        return x

    it = iter(hr.Dataset.range(300).map(decode).batch(5))
    it.timeline.interval_seconds = 0.01
    list(it)
    return it.stats()


def test_trace_is_chrome_trace_json(tmp_path):
    path = stats_of_a_run().save_trace(str(tmp_path / "t.json"))
    trace = json.load(open(path))
    names = {e["name"] for e in trace["traceEvents"]}
    assert "consumer" in names and any(n.startswith("map(decode") for n in names)
    assert all("ph" in e and "pid" in e for e in trace["traceEvents"])
    counters = [e for e in trace["traceEvents"] if e["ph"] == "C"]
    assert counters and all(e["ts"] >= 0 for e in counters)


_REQUIRED = {
    "M": {"name", "pid", "args"},
    "X": {"name", "pid", "tid", "ts", "dur"},
    "C": {"name", "pid", "ts", "args"},
    "i": {"name", "pid", "tid", "ts", "s"},
    "s": {"name", "pid", "tid", "ts", "id", "cat"},
    "f": {"name", "pid", "tid", "ts", "id", "cat", "bp"},
}


def check_trace_schema(trace: dict) -> None:
    """The Trace Event Format as chrome://tracing and Perfetto's JSON importer read it."""
    assert isinstance(trace["traceEvents"], list) and trace["displayTimeUnit"] in ("ms", "ns")
    for event in trace["traceEvents"]:
        missing = _REQUIRED[event["ph"]] - set(event)
        assert not missing, (event, missing)
        if "ts" in event:
            assert isinstance(event["ts"], (int, float)) and event["ts"] >= 0, event
        if event["ph"] == "X":
            assert event["dur"] > 0, event
        if event["ph"] == "C":
            assert all(isinstance(v, (int, float)) for v in event["args"].values()), event
    check_flows(trace)


def check_flows(trace: dict) -> None:
    """Every arrow starts and lands inside a slice, on another track, and never goes back in time."""
    events = trace["traceEvents"]
    slices: dict[tuple, list[tuple[float, float]]] = {}
    for e in events:
        if e["ph"] == "X":
            slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))

    def inside(event: dict) -> bool:
        return any(a <= event["ts"] <= b for a, b in slices.get((event["pid"], event["tid"]), []))

    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == len([e for e in events if e["ph"] == "s"]), "flow ids repeat"
    assert starts.keys() == ends.keys()  # every arrow lands
    for number, start in starts.items():
        end = ends[number]
        assert (start["pid"], start["tid"]) != (end["pid"], end["tid"]), (start, end)
        assert end["ts"] >= start["ts"], (start, end)
        assert inside(start) and inside(end), (start, end)


def recorded_run():
    def decode(x):
        time.sleep(0.001)
        return x

    with hr.profile.record_calls():
        it = iter(hr.Dataset.range(60).map(decode).batch(5).prefetch(2))
        for _ in it:
            time.sleep(0.003)
    return it.stats()


def test_recorded_trace_has_a_slice_per_batch_on_each_thread_and_arrows(tmp_path):
    stats = recorded_run()
    trace = json.load(open(stats.save_trace(str(tmp_path / "t.json"))))
    check_trace_schema(trace)
    events = trace["traceEvents"]
    threads = {e["args"]["name"]: e["tid"] for e in events if e.get("name") == "thread_name"}
    assert "consumer thread" in threads and any(name.startswith("worker thread 1") for name in threads)
    batches = [e for e in events if e["ph"] == "X" and e["name"].startswith("batch(")]
    # One slice per batch (and one for the call that found the end), on the prefetch thread.
    assert len(batches) in (12, 13) and sum(e["args"]["elements"] for e in batches) == 12
    assert all(e["tid"] != threads["consumer thread"] for e in batches)
    prefetch = [e for e in events if e["ph"] == "X" and e["name"] == "prefetch(2)"]
    assert len(prefetch) in (12, 13) and all(e["tid"] == threads["consumer thread"] for e in prefetch)
    assert [e for e in events if e["ph"] == "s"], "no arrow from the worker thread to the consumer"
    assert any(e["name"] == "iter(): building the pipeline" for e in events)
    counter_tracks = {(e["name"], key) for e in events if e["ph"] == "C" for key in e["args"]}
    assert ("consumer", "wait share") in counter_tracks
    assert all(key not in name for name, key in counter_tracks)  # no "busy busy" track names


def slow_identity(x):
    time.sleep(0.001)
    return x


def recorded_parallel_map(executor: str, count: int = 120):
    with hr.profile.record_calls():
        it = iter(hr.Dataset.range(count).map(slow_identity, 3, executor=executor).batch(10))
        assert sum(len(batch) for batch in it) == count
    stats = it.stats()
    worker_pids = it.root.inputs[0].counters()["worker_pids"]
    it.close()
    return stats, worker_pids


def worker_slices(stats, stage: str) -> list:
    index = stats.stage(stage).index
    return [piece for piece in stats.slices if piece.worker and piece.stage == index]


def test_thread_workers_show_their_chunks_with_arrows_to_the_consumer(tmp_path):
    stats, _ = recorded_parallel_map("thread")
    chunks = worker_slices(stats, "map(slow_identity")
    assert len({piece.thread for piece in chunks}) >= 2 and {piece.pid for piece in chunks} == {os.getpid()}
    assert sum(piece.elements for piece in chunks) == stats.stage("map(slow_identity").produced == 120
    trace = json.load(open(stats.save_trace(str(tmp_path / "t.json"))))
    check_trace_schema(trace)
    events = trace["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    worker_tids = {e["tid"] for e in events if e["ph"] == "X" and e["cat"] == "worker"}
    assert len(worker_tids) >= 2
    assert all(
        names[tid].startswith("worker thread") and "slow_identity" in names[tid] for tid in worker_tids
    )
    consumer = next(tid for tid, name in names.items() if name == "consumer thread")
    landing = {e["id"]: e["tid"] for e in events if e["ph"] == "f"}
    from_workers = [e["id"] for e in events if e["ph"] == "s" and e["tid"] in worker_tids]
    assert from_workers and all(landing[number] == consumer for number in from_workers)


def test_process_workers_show_their_chunks_on_their_own_process_tracks(tmp_path):
    stats, worker_pids = recorded_parallel_map("process")
    chunks = worker_slices(stats, "map(slow_identity")
    assert {piece.pid for piece in chunks} == set(worker_pids) and len(worker_pids) == 3
    assert sum(piece.elements for piece in chunks) == 120
    # perf_counter_ns is one clock for every process: the workers' times lie inside the run
    assert all(0 <= piece.start <= piece.end <= stats.elapsed_seconds for piece in chunks)
    trace = json.load(open(stats.save_trace(str(tmp_path / "t.json"))))
    check_trace_schema(trace)
    events = trace["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    for pid in worker_pids:
        assert processes[pid] == f"worker process {pid} (runs {stats.stage('map(slow_identity').name})"
    assert processes[os.getpid()] == "headrace pipeline"
    arrows = [e for e in events if e["ph"] == "s" and e["pid"] in worker_pids]
    assert arrows and all(
        any(f["id"] == s["id"] and f["pid"] == os.getpid() for f in events if f["ph"] == "f") for s in arrows
    )


def test_parallelize_workers_show_their_chunks_on_their_own_process_tracks(tmp_path):
    with hr.profile.record_calls():
        it = iter(hr.Dataset.range(60).map(slow_identity).parallelize(2).batch(6))
        assert sum(len(batch) for batch in it) == 60
    stats = it.stats()
    stage = stats.stage("parallelize(2)")
    pids = it.root.inputs[0].counters()["worker_pids"]
    it.close()
    chunks = worker_slices(stats, "parallelize(2)")
    assert {piece.pid for piece in chunks} == set(pids) and len(pids) == 2
    assert sum(piece.elements for piece in chunks) == stage.produced == 60
    assert all(0 <= piece.start <= piece.end <= stats.elapsed_seconds for piece in chunks)
    trace = json.load(open(stats.save_trace(str(tmp_path / "t.json"))))
    check_trace_schema(trace)
    assert any(e["ph"] == "s" and e["pid"] in pids for e in trace["traceEvents"])


def test_parallel_interleave_reads_are_slices_on_their_reader_threads(tmp_path, monkeypatch):
    monkeypatch.setattr("headrace.ops.interleave_parallel.TRY_INLINE", False)  # a reader per slot
    with hr.profile.record_calls():
        ds = hr.Dataset.range(3).interleave(
            lambda i: hr.Dataset.range(8).map(slow_identity), cycle_length=3, num_parallel_calls=3
        )
        it = iter(ds)
        assert len(list(it)) == 24
    stats = it.stats()
    reads = worker_slices(stats, "interleave")
    assert len({piece.thread for piece in reads}) == 3 and sum(piece.elements for piece in reads) == 24
    check_trace_schema(json.load(open(stats.save_trace(str(tmp_path / "t.json")))))


def stamped(x, slow_first=0.06, others=0.004):
    """The element, where and when it was computed: (x, pid, thread, perf_counter_ns)."""
    time.sleep(slow_first if x == 0 else others)
    return x, os.getpid(), threading.get_ident(), time.perf_counter_ns()


def consume_with_windows(it, step_seconds: float = 0.0) -> list[tuple[int, int, int]]:
    """Iterate, noting for each element the consumer's call around it: (value, start ns, end ns)."""
    out = []
    while True:
        start = time.perf_counter_ns()
        try:
            element = next(it)
        except StopIteration:
            return out
        out.append((element, start, time.perf_counter_ns()))
        time.sleep(step_seconds)


def trace_arrows(trace: dict) -> list[tuple[dict, dict]]:
    events = trace["traceEvents"]
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    return [(e, ends[e["id"]]) for e in events if e["ph"] == "s"]


def check_exact_arrows(stats, made_by: dict[int, tuple], taken: dict[int, tuple], origin: int) -> int:
    """Every arrow of the trace runs from a producing slice to the call that handed its first
    element on, and each producing slice has exactly one.

    ``made_by[value]`` is (pid, thread, ns) where and when the element was made, ``taken[value]``
    the (start ns, end ns) window of the consumer's call that got it; the trace must agree with
    them. Returns how many arrows the old rule (first call of the stage ending after the producing
    slice) would have drawn to another call."""
    from headrace.profile.export import _tracks, trace_events

    tracks = _tracks(stats)
    trace = trace_events(stats)
    check_trace_schema(trace)
    seconds = {v: (ns - origin) / 1e9 for v, (_, _, ns) in made_by.items()}
    # The producing slice of each element: the slice on its track around the time it was made
    # (the innermost one: a map call inside prefetch's producer loop, not the range call in it).
    producers = [
        p for p in stats.slices if p.worker or p.pid != stats.pid or p.thread != threading.get_ident()
    ]
    first_of: dict = {}
    for value, (pid, thread, _) in made_by.items():
        track = (pid, pid if pid != stats.pid else thread)
        around = [p for p in producers if (p.pid, p.thread) == track and p.start <= seconds[value] <= p.end]
        assert around, f"no slice made element {value}"
        piece = min(around, key=lambda p: p.end - p.start)
        first_of[piece] = min(first_of.get(piece, value), value)
    consumer_calls = [p for p in stats.slices if not p.worker and p.thread == threading.get_ident()]
    root = min(p.stage for p in consumer_calls)
    calls = sorted((p for p in consumer_calls if p.stage == root), key=lambda p: p.start)

    def call_that_took(value):
        start, end = ((ns - origin) / 1e9 for ns in taken[value])
        found = [p for p in calls if start <= p.start and p.end <= end]
        assert len(found) == 1, (value, found)
        return found[0]

    arrows = trace_arrows(trace)
    assert len(arrows) == len(first_of), "one arrow per producing slice"
    wrong_guesses = 0
    for piece, value in first_of.items():
        pid, tid = piece.pid, tracks[(piece.pid, piece.thread)][0]
        mid = (piece.start + piece.end) / 2 * 1e6
        matching = [
            (s, f) for s, f in arrows if (s["pid"], s["tid"]) == (pid, tid) and abs(s["ts"] - mid) < 1e-3
        ]
        assert len(matching) == 1, (piece, value)
        landing = matching[0][1]
        call = call_that_took(value)
        assert (landing["pid"], landing["tid"]) == (stats.pid, tracks[(call.pid, call.thread)][0])
        assert call.start * 1e6 <= landing["ts"] <= call.end * 1e6, (value, call, landing)
        guess = next((c for c in calls if c.end >= piece.end), None)
        wrong_guesses += guess is not call
    return wrong_guesses


@pytest.mark.parametrize("deterministic", [True, False])
@pytest.mark.parametrize("executor", ["thread", "process"])
def test_arrows_land_on_the_call_that_handed_the_chunk_on_when_chunks_finish_out_of_order(
    executor, deterministic
):
    with hr.profile.record_calls():
        it = iter(hr.Dataset.range(12).map(stamped, 3, executor=executor, deterministic=deterministic))
        got = consume_with_windows(it)
    stats = it.stats()
    it.close()
    values = [int(element[0]) for element, _, _ in got]
    assert sorted(values) == list(range(12))
    if deterministic:
        assert values == list(range(12))
    made_by = {int(e[0]): (int(e[1]), int(e[2]), int(e[3])) for e, _, _ in got}
    taken = {int(e[0]): (start, end) for e, start, end in got}
    wrong_guesses = check_exact_arrows(stats, made_by, taken, it.created_ns)
    if deterministic:
        # Element 0's chunk finished last: chunks done before it would all have landed on its call.
        assert wrong_guesses >= 1


@settings(max_examples=8, deadline=None)
@given(
    delays=st.lists(st.integers(0, 4), min_size=1, max_size=10),
    workers=st.integers(2, 3),
    deterministic=st.booleans(),
)
def test_any_finishing_order_gives_exact_arrows(delays, workers, deterministic):
    def work(x):
        time.sleep(delays[int(x)] / 1000)
        return x, os.getpid(), threading.get_ident(), time.perf_counter_ns()

    with hr.profile.record_calls():
        it = iter(
            hr.Dataset.range(len(delays)).map(work, workers, executor="thread", deterministic=deterministic)
        )
        got = consume_with_windows(it)
    stats = it.stats()
    it.close()
    made_by = {int(e[0]): (int(e[1]), int(e[2]), int(e[3])) for e, _, _ in got}
    taken = {int(e[0]): (start, end) for e, start, end in got}
    check_exact_arrows(stats, made_by, taken, it.created_ns)


def test_prefetch_arrows_land_on_the_call_that_took_the_element():
    with hr.profile.record_calls():
        it = iter(hr.Dataset.range(10).map(lambda x: stamped(x, 0.002, 0.002)).prefetch(2))
        got = consume_with_windows(it, step_seconds=0.006)  # a slow consumer: the producer runs ahead
    stats = it.stats()
    it.close()
    made_by = {int(e[0]): (int(e[1]), int(e[2]), int(e[3])) for e, _, _ in got}
    taken = {int(e[0]): (start, end) for e, start, end in got}
    # The old rule landed each arrow on the call before the one that took the element.
    assert check_exact_arrows(stats, made_by, taken, it.created_ns) >= 3


def read_stamped(i):
    return hr.Dataset.range(4 * i, 4 * i + 4).map(stamped)


@pytest.mark.parametrize(
    "make",
    [
        lambda: hr.Dataset.range(12).map(stamped).parallelize(2),
        lambda: hr.Dataset.range(3).interleave(read_stamped, cycle_length=3, num_parallel_calls=3),
    ],
    ids=["parallelize", "parallel interleave"],
)
def test_worker_and_reader_arrows_land_on_the_call_that_handed_the_element_on(make, monkeypatch):
    monkeypatch.setattr("headrace.ops.interleave_parallel.TRY_INLINE", False)  # a reader per slot
    with hr.profile.record_calls():
        it = iter(make())
        got = consume_with_windows(it)
    stats = it.stats()
    it.close()
    assert sorted(int(e[0]) for e, _, _ in got) == list(range(12))
    made_by = {int(e[0]): (int(e[1]), int(e[2]), int(e[3])) for e, _, _ in got}
    taken = {int(e[0]): (start, end) for e, start, end in got}
    check_exact_arrows(stats, made_by, taken, it.created_ns)


def test_arrows_stay_bounded(tmp_path, monkeypatch):
    from headrace.profile import export

    monkeypatch.setattr(export, "MAX_FLOWS", 5)
    stats, _ = recorded_parallel_map("thread", 60)
    trace = export.trace_events(stats)
    check_trace_schema(trace)
    assert len([e for e in trace["traceEvents"] if e["ph"] == "s"]) == 5
    assert len([e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] == "worker"]) > 5


def test_trace_without_recording_still_opens(tmp_path):
    trace = json.load(open(stats_of_a_run().save_trace(str(tmp_path / "t.json"))))
    check_trace_schema(trace)
    assert not [e for e in trace["traceEvents"] if e["ph"] == "X" and e.get("cat") != "startup"]


def test_html_is_self_contained(tmp_path):
    page = open(stats_of_a_run().save_html(str(tmp_path / "r.html"))).read()
    # throughput, wait, waterfall, stage bars (no buffered stage, no tuner here)
    assert page.count("<svg") == 4 and "Bottleneck: map(decode" in page
    assert "seconds since iter()" in page and "startup" in page
    assert "http://" not in page and "https://" not in page  # opens offline


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _browser_args(tmp_path) -> list[str]:
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (.ci/run installs it)")
    return [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=3000",
    ]


def a_busy_run_with_long_names():
    def decode_and_augment_a_very_long_named_function_for_images(x):
        time.sleep(0.001)
        return x

    ds = (
        hr.Dataset.range(400)
        .map(decode_and_augment_a_very_long_named_function_for_images, num_parallel_calls=hr.AUTOTUNE)
        .shuffle(64)
        .batch(8, drop_remainder=True)
        .prefetch(2)
    )
    it = iter(ds)
    it.timeline.interval_seconds = 0.02
    for _ in it:
        time.sleep(0.003)
    return it.stats()


@pytest.mark.slow
@pytest.mark.parametrize("make", [stats_of_a_run, a_busy_run_with_long_names])
def test_plots_render_in_headless_chromium_without_clipped_labels(tmp_path, make):
    page = make().save_html(str(tmp_path / "r.html"))
    url = "file://" + os.path.abspath(page)
    args = _browser_args(tmp_path)
    result = subprocess.run(
        [*args, "--dump-dom", url], capture_output=True, text=True, timeout=90, check=False
    )
    body = re.search(r"<body([^>]*)>", result.stdout)
    assert body, result.stderr[-2000:]
    attrs = dict(re.findall(r'(data-[a-z-]+)="([^"]*)"', body.group(1)))
    assert int(attrs["data-plots"]) >= 4
    assert attrs["data-plots-rendered"] == attrs["data-plots"], "a plot drew no data"
    assert attrs["data-clipped-labels"] == "0", f"labels outside their plot: {attrs['data-clipped-text']}"
    shot = tmp_path / "shot.png"
    subprocess.run(
        [*args, "--window-size=1360,1400", f"--screenshot={shot}", url],
        capture_output=True,
        timeout=90,
        check=False,
    )
    image = pytest.importorskip("PIL.Image")
    with image.open(shot) as picture:
        colours = picture.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50, "the screenshot is (nearly) blank"
