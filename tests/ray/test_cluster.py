from __future__ import annotations

import socket
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow
pytest.importorskip("ray")


def test_an_unreachable_cluster_fails_clearly_instead_of_waiting():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = f"import headrace as hr\nlist(hr.Dataset.range(3).run_on('127.0.0.1:{port}', num_workers=1))\n"
    # The timeout is a hang guard (Ray's own connect retries would wait far longer), not a speed bound.
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert f"cannot reach a Ray cluster at 127.0.0.1:{port}" in result.stderr


def test_a_malformed_address_is_refused():
    import headrace as hr
    from headrace.ray.cluster import _probe

    with pytest.raises(hr.InvalidArgumentError, match="HOST:PORT"):
        _probe("localhost")


def test_the_test_cluster_listens_on_the_loopback_only(cluster):
    import ray

    nodes = [node for node in ray.nodes() if node["Alive"]]
    assert len(nodes) == 2
    assert {node["NodeManagerAddress"] for node in nodes} == {"127.0.0.1"}
    assert cluster.address.startswith("127.0.0.1:")


def test_a_local_ray_started_by_connect_outlives_the_thread_that_started_it(tmp_path):
    # Ray has the kernel kill the processes it starts when their parent *thread* exits: a local start
    # on a helper thread lost its GCS and raylet at once, and the first task hung, then aborted.
    code = (
        "import time, ray\n"
        "from headrace.ray.cluster import connect\n"
        "connect()\n"
        "time.sleep(1)\n"
        "print('answer', ray.get(ray.remote(lambda: 7).remote(), timeout=60))\n"
        "ray.shutdown()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=150, cwd=tmp_path
    )
    assert result.returncode == 0 and "answer 7" in result.stdout, result.stderr[-3000:]


def test_no_address_starts_a_new_local_ray_or_joins_ray_address(monkeypatch):
    # Plain ray.init() joins the cluster another program left on this machine (`ray start --head`),
    # whose workers run that program's code in its folder (issue 24: the docs' `convert --ray` read
    # another tree's files). No address: a new local Ray, unless $RAY_ADDRESS says where (a Ray job).
    from headrace.ray import cluster

    calls = []

    class FakeRay:
        def is_initialized(self):
            return False

        def init(self, **kwargs):
            calls.append(kwargs.get("address"))

    monkeypatch.setattr(cluster, "import_ray", FakeRay)
    monkeypatch.setattr(cluster, "_probe", lambda address: None)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    cluster.connect()
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    cluster.connect()
    assert calls == ["local", "10.0.0.5:6379"]
