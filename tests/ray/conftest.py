"""One real multi-node Ray cluster on 127.0.0.1 (a head and a worker node) shared by the Ray tests."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")


@pytest.fixture(scope="session")
def cluster():
    cluster = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    cluster.add_node(num_cpus=2)
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.wait_for_nodes()
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
