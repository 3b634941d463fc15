import os

from headrace.core.cpus import available_cpus, schedulable_cpus
from headrace.core.node import AUTOTUNE
from headrace.ops.interleave import default_cycle_length
from headrace.runtime.defaults import resolve_parallelism


def test_quota_caps_affinity(tmp_path):
    (tmp_path / "cpu.max").write_text("150000 100000")
    assert available_cpus(str(tmp_path)) == 1  # 1.5 CPUs of quota: one worker keeps it busy
    (tmp_path / "cpu.max").write_text("max 100000")
    assert available_cpus(str(tmp_path)) == len(os.sched_getaffinity(0))


def test_every_autotune_default_uses_the_same_count():
    # Map's AUTOTUNE uses the tuner's CPU budget (affinity capped by the cgroup quota); interleave's
    # default cycle is tf.data's, the schedulable CPUs, so that its order matches tf.data's.
    assert resolve_parallelism(AUTOTUNE, None) == available_cpus()
    assert default_cycle_length() == schedulable_cpus()
