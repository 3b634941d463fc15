import io
import time

import pytest

import headrace as hr
from headrace.profile.live import progress_line


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


def test_progress_says_training_bound_when_the_loop_is_slower():
    out = io.StringIO()
    for _ in hr.profile.progress(hr.Dataset.range(30), every_seconds=0.02, file=out):
        time.sleep(0.005)
    assert "training-bound" in out.getvalue().splitlines()[-2]


def test_progress_line_covers_only_the_interval():
    it = iter(hr.Dataset.range(1000).map(slow))
    for _ in range(20):
        next(it)
    first = it.stats()
    time.sleep(0.1)  # the loop "trains": no wait in the next interval
    next(it)
    line = progress_line(it.stats(), first)
    assert "21 elements" in line and "training-bound" in line
    it.close()


def test_progress_rejects_what_it_cannot_measure():
    with pytest.raises(TypeError, match="headrace Dataset or Iterator"):
        list(hr.profile.progress([1, 2, 3]))
    with pytest.raises(ValueError, match="every_seconds"):
        list(hr.profile.progress(hr.Dataset.range(3), every_seconds=-1))
