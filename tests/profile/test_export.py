import json
import os
import re
import shutil
import subprocess
import time

import pytest

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
    starts = sorted(e["id"] for e in trace["traceEvents"] if e["ph"] == "s")
    assert starts == sorted(e["id"] for e in trace["traceEvents"] if e["ph"] == "f")  # every arrow lands


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
