import io
import time

import pytest

import headrace as hr
from headrace.profile.live import progress_line
from tests.helpers.clock import install_fake_clock


def slow(x):
    time.sleep(0.002)
    return x


def test_progress_prints_rate_wait_and_bottleneck_and_yields_everything():
    out = io.StringIO()
    seen = [
        int(x) for x in hr.profile.progress(hr.Dataset.range(120).map(slow), every_seconds=0.05, file=out)
    ]
    assert seen == list(range(120))
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3 and lines[-1].endswith("(whole run)")
    assert all("elements/s" in line for line in lines)
    assert "input-bound on map(slow" in lines[-2]  # the loop does nothing: the map holds it back


def test_progress_says_training_bound_when_the_loop_is_slower(monkeypatch):
    clock = install_fake_clock(monkeypatch)
    ds = hr.Dataset.range(30).map(_compiling_map(clock, 0.001, 0.001))
    out = io.StringIO()
    for _ in hr.profile.progress(ds, every_seconds=0.02, file=out):
        clock.advance(0.02)  # the training step takes twenty times the map's time
    assert "training-bound" in out.getvalue().splitlines()[-2]


def test_progress_line_covers_only_the_interval(monkeypatch):
    # On the fake clock: a loaded machine stretched the real map's 2 ms into the "training" interval.
    clock = install_fake_clock(monkeypatch)
    it = iter(hr.Dataset.range(1000).map(_compiling_map(clock, 0.002, 0.002)))
    for _ in range(20):
        next(it)
    first = it.stats()
    clock.advance(0.1)  # the loop "trains": 2 ms of waiting in the next 102 ms
    next(it)
    line = progress_line(it.stats(), first)
    assert "21 elements" in line and "training-bound" in line, line
    it.close()


def test_progress_rejects_what_it_cannot_measure():
    with pytest.raises(TypeError, match="headrace Dataset or Iterator"):
        list(hr.profile.progress([1, 2, 3]))
    with pytest.raises(ValueError, match="every_seconds"):
        list(hr.profile.progress(hr.Dataset.range(3), every_seconds=-1))


# --- total, ETA and startup, on the fake clock (tests/helpers/clock.py): exact on any machine ------
def _compiling_map(clock, first_seconds: float, per_call: float):
    calls = []

    def step(x):
        clock.advance(first_seconds if not calls else per_call)  # the first call compiles
        calls.append(x)
        return x

    return step


def test_progress_shows_total_and_eta_and_keeps_startup_apart(monkeypatch):
    clock = install_fake_clock(monkeypatch)
    ds = hr.Dataset.range(20).map(_compiling_map(clock, first_seconds=5.0, per_call=0.01))
    out = io.StringIO()
    for _ in hr.profile.progress(ds, every_seconds=1.0, file=out):
        clock.advance(0.19)  # the training step: 0.2 s per element with the map's 0.01 s
    lines = out.getvalue().splitlines()
    # The first line comes after the compile; its figures cover the time after the first element.
    assert lines[0].startswith("headrace: 1 of 20 elements, starting (5.2 s, first element after 5.0 s)")
    assert "of 20 elements, 5 elements/s" in lines[1] and "ETA 0:03" in lines[1], lines
    assert all("training-bound" in line and "5% busy" in line for line in lines[1:]), lines
    # The compile's 5 s wait must not flip the whole run's verdict to input-bound.
    last = lines[-1]
    assert last.startswith("headrace: 20 of 20 elements, 5 elements/s, waited 5%, training-bound"), last
    assert "startup 5.0 s before the first element" in last and last.endswith("(whole run)")


def test_progress_takes_the_total_of_an_earlier_epoch_when_the_length_is_unknown(monkeypatch):
    clock = install_fake_clock(monkeypatch)
    ds = hr.Dataset.range(40).filter(lambda x: x % 2 == 0).map(_compiling_map(clock, 0.1, 0.1))
    assert ds.cardinality() == hr.UNKNOWN_CARDINALITY
    first, second = io.StringIO(), io.StringIO()
    for _ in hr.profile.progress(ds, every_seconds=0.5, file=first):
        pass
    assert " of " not in first.getvalue() and "ETA" not in first.getvalue()
    for _ in hr.profile.progress(ds, every_seconds=0.5, file=second):
        pass
    lines = second.getvalue().splitlines()
    assert "of 20 elements" in lines[1] and "ETA 0:" in lines[1], lines
    assert "input-bound on map(" in lines[-1]  # the loop does nothing: the map holds it back


def test_progress_on_a_terminal_rewrites_one_line(monkeypatch):
    clock = install_fake_clock(monkeypatch)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    for _ in hr.profile.progress(hr.Dataset.range(5), every_seconds=1.0, total=5, file=out):
        clock.advance(0.6)
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("(whole run)\n")
    assert text.count("\r\x1b[K") == text.count("headrace:")  # each line overwrites the last
