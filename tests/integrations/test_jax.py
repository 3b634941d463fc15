import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("jax")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(*args: str) -> subprocess.Popen:
    env = dict(
        os.environ,
        XLA_FLAGS="--xla_force_host_platform_device_count=2",
        JAX_PLATFORMS="cpu",
        PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "src"), os.environ.get("PYTHONPATH", "")]),
    )
    return subprocess.Popen(
        [sys.executable, os.path.join(HERE, "jax_worker.py"), *args], env=env, stderr=subprocess.PIPE
    )


def wait(procs, timeout: int = 120) -> None:
    try:
        errors = [p.communicate(timeout=timeout)[1].decode() for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in procs), "\n".join(errors)[-3000:]


def shuffled() -> list[int]:
    import headrace as hr

    return [int(x) for x in hr.Dataset.range(22).global_shuffle(seed=5)]


def test_prefetch_to_device_shards_batches_over_two_simulated_devices_and_resumes(tmp_path):
    out = tmp_path / "single.json"
    wait([run("single", str(out))])
    result = json.loads(out.read_text())
    assert result["devices"] == 2 and result["is_jax"]
    assert result["shard_devices"] == [[0, 1], [0, 1]]
    assert result["shard_rows"] == [[2, 2], [2, 2]]  # 4 rows split over the 2 devices
    order = shuffled()
    assert result["values"] == [order[i : i + 4] for i in range(0, 20, 4)]
    assert result["resumed"] == result["values"][2:]  # the state described batches handed out only
    assert result["plain"] == [[0, 1, 2, 3], [4, 5, 6, 7]]


@pytest.mark.slow
def test_two_processes_feed_one_global_array_through_make_array_from_process_local_data(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    outs = [tmp_path / f"p{i}.json" for i in range(2)]
    wait([run("multi", str(i), port, str(outs[i])) for i in range(2)], timeout=180)
    results = [json.loads(o.read_text()) for o in outs]
    order = shuffled()
    shares = [order[0::2], order[1::2]]  # distribute(): process i takes element i of each pair
    for pid, result in enumerate(results):
        assert result["shapes"] == [[4]] * 5  # 11 per process, batches of 2 rows: 5 global batches of 4
        for step, shards in enumerate(result["local"]):
            assert [x for shard in shards for x in shard] == shares[pid][2 * step : 2 * step + 2]
    assert results[0]["totals"] == results[1]["totals"]
    expected = [sum(shares[0][2 * s : 2 * s + 2]) + sum(shares[1][2 * s : 2 * s + 2]) for s in range(5)]
    assert results[0]["totals"] == expected


def test_invalid_arguments():
    import headrace as hr
    import headrace.jax as hrj

    with pytest.raises(hr.InvalidArgumentError, match="size"):
        hrj.prefetch_to_device(hr.Dataset.range(3), size=0)
    with pytest.raises(hr.InvalidArgumentError, match="sharding"):
        hrj.prefetch_to_device(hr.Dataset.range(3), sharding="data")
    with pytest.raises(TypeError, match="headrace Dataset"):
        hrj.prefetch_to_device([np.arange(2)]).get_state()
