import json

import pytest

import headrace as hr
from headrace.lookahead import ReadAhead


def ints(iterable) -> list[int]:
    return [int(x) for x in iterable]


@pytest.mark.parametrize("depth", [1, 2, 5, 50])
def test_state_describes_the_elements_handed_out_not_those_read_ahead(depth):
    def make():
        return hr.Dataset.range(12).global_shuffle(seed=3).batch(2)

    expected = [b.tolist() for b in make()]
    for taken in range(len(expected) + 1):
        staged = []
        ahead = ReadAhead(iter(make()), depth, stage=lambda b, staged=staged: staged.append(1) or b.tolist())
        head = [next(ahead) for _ in range(taken)]
        assert len(staged) == (min(len(expected), taken + depth) if taken else 0)  # depth read ahead
        resumed = iter(make())
        resumed.set_state(json.loads(json.dumps(ahead.get_state())))
        assert head + [b.tolist() for b in resumed] == expected


def test_exhausted_read_ahead_stays_exhausted_and_depth_is_checked():
    ahead = ReadAhead(iter(hr.Dataset.range(3)), 2)
    assert ints(ahead) == [0, 1, 2]
    with pytest.raises(StopIteration):
        next(ahead)
    with pytest.raises(ValueError, match="depth"):
        ReadAhead(iter(hr.Dataset.range(3)), 0)


def test_errors_in_the_stage_reach_the_consumer():
    def boom(x):
        if int(x) == 2:
            raise RuntimeError("copy failed")
        return x

    ahead = ReadAhead(iter(hr.Dataset.range(5)), 1, boom)
    assert int(next(ahead)) == 0
    with pytest.raises(RuntimeError, match="copy failed"):
        next(ahead)
        next(ahead)
