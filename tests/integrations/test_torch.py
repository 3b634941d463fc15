import json
import os
import socket
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import headrace as hr  # noqa: E402
import headrace.torch as hrt  # noqa: E402
from headrace.ops.distribute import Layout, job_layout  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
D = hr.Dataset


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ids(batches) -> list[int]:
    return [int(i) for b in batches for i in np.asarray(b).ravel()]


def test_loader_yields_tensors_per_epoch_with_len():
    loader = hrt.to_torch(D.range(10).map(lambda x: (x, np.float32(x) / 2)).batch(4))
    assert len(loader) == 3
    for _ in range(2):
        batches = list(loader)
        assert [tuple(t.dtype for t in b) for b in batches] == [(torch.int64, torch.float32)] * 3
        assert ids(b[0] for b in batches) == list(range(10))


def test_tensors_never_alias_read_only_arrays_and_strings_stay():
    frozen = np.arange(4)
    frozen.flags.writeable = False
    out = hrt.to_tensors({"x": frozen, "s": np.array([b"a", b"b"], dtype=object), "n": np.int32(3)})
    out["x"][0] = 9
    assert frozen[0] == 0
    assert out["s"].tolist() == [b"a", b"b"] and out["n"].dtype == torch.int32
    writable = np.arange(3)
    assert hrt.to_tensors(writable).data_ptr() == writable.ctypes.data  # zero copy where it is safe


def test_loader_on_cpu_device_and_invalid_arguments():
    assert [b.device.type for b in hrt.to_torch(D.range(3).batch(2), device="cpu")] == ["cpu", "cpu"]
    with pytest.raises(hr.InvalidArgumentError, match="prefetch"):
        hrt.to_torch(D.range(3), prefetch=-1)
    with pytest.raises(hr.InvalidArgumentError, match="remainder"):
        hrt.to_torch(D.range(3), remainder="wrap")
    with pytest.raises(hr.InvalidArgumentError, match="headrace Dataset"):
        hrt.to_torch([1, 2])
    if not torch.cuda.is_available():
        with pytest.raises(hr.InvalidArgumentError, match="no CUDA"):
            hrt.to_torch(D.range(3), device="cuda")
    with pytest.raises(TypeError, match="unknown"):
        len(hrt.to_torch(D.range(3).filter(lambda x: True)))


def test_pinning_is_only_asked_for_on_cuda():
    assert hrt.to_torch(D.range(3), device="cpu", pin_memory=True).pin_memory is False
    assert hrt.to_torch(D.range(3), device="cpu").prefetch == 0  # nothing to overlap on the host


def test_loader_state_dict_resumes_exactly_in_the_next_epoch_too():
    def make():
        return hrt.to_torch(D.range(20).global_shuffle(seed=4).batch(3))

    loader = make()
    full = [ids(loader), ids(loader)]
    loader = make()
    first = list(loader)
    it = iter(loader)
    taken = [next(it), next(it)]
    state = json.loads(json.dumps(loader.state_dict()))
    resumed = make()
    resumed.load_state_dict(state)
    assert ids(first) == full[0]
    assert ids(taken) + ids(resumed) == full[1]
    with pytest.raises(hr.CheckpointError, match="state_dict"):
        resumed.load_state_dict({"nope": 1})


def test_loader_shards_by_rank_from_the_environment(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    shares = []
    for rank in range(2):
        monkeypatch.setenv("RANK", str(rank))
        loader = hrt.to_torch(D.range(9).batch(2), remainder="drop")  # batches 0..4: 2 per rank
        shares.append([b.tolist() for b in loader])
        assert len(loader) == 2
    assert shares == [[[0, 1], [4, 5]], [[2, 3], [6, 7]]]


@pytest.mark.filterwarnings("ignore:Length of IterableDataset")  # explicit: 14 batches, len says 13
@pytest.mark.parametrize("explicit", [False, True])
def test_dataloader_with_two_workers_sees_every_element_once(explicit):
    ds = D.range(50).global_shuffle(seed=3)
    ds = (ds.distribute() if explicit else ds).map(lambda x: x * 10).batch(4)
    adapter = hrt.IterableDataset(ds)
    loader = torch.utils.data.DataLoader(adapter, batch_size=None, num_workers=2)
    assert len(loader) == 13
    batches = list(loader)
    assert sorted(ids(batches)) == [10 * i for i in range(50)]
    if explicit:  # each worker batches its own 25 elements: 7 batches each, the last of 1
        assert sorted(len(b) for b in batches) == [1, 1] + [4] * 12
    else:  # batches split among workers, taken in turn: the dataset's own order
        assert ids(batches) == ids(ds)


def test_dataloader_workers_reshuffle_with_set_epoch():
    adapter = hrt.IterableDataset(D.range(16).global_shuffle(seed=2).distribute().batch(4))
    loader = torch.utils.data.DataLoader(adapter, batch_size=None, num_workers=2)
    epochs = []
    for epoch in range(2):
        adapter.set_epoch(epoch)
        epochs.append(ids(loader))
    assert sorted(epochs[0]) == sorted(epochs[1]) == list(range(16))
    assert epochs[0] != epochs[1]
    shuffled = D.range(16).global_shuffle(seed=2)
    for epoch in range(2):  # as the epoch-th iteration in one process; workers take alternate elements
        order = [int(x) for x in shuffled]
        w0, w1 = order[0::2], order[1::2]
        assert epochs[epoch] == w0[:4] + w1[:4] + w0[4:] + w1[4:]


def test_persistent_workers_reshuffle_each_epoch_too():
    adapter = hrt.IterableDataset(D.range(16).global_shuffle(seed=2).distribute().batch(4))
    adapter.set_epoch(0)
    loader = torch.utils.data.DataLoader(adapter, batch_size=None, num_workers=2, persistent_workers=True)
    epochs = [ids(loader) for _ in range(3)]
    assert all(sorted(e) == list(range(16)) for e in epochs)
    assert epochs[0] != epochs[1] != epochs[2]


def test_rank_and_worker_shards_cover_the_epoch():
    seen = []
    for rank in range(3):
        for worker in range(2):  # each its own process, so each builds the pipeline afresh
            with job_layout(Layout(3, rank, 2, worker)):
                seen.extend(ids(D.range(41).global_shuffle(seed=1).distribute(remainder="drop").batch(2)))
    assert len(seen) == len(set(seen)) == 39  # 41 // 3 = 13 per rank, no element twice


@pytest.mark.parametrize("num_workers", [0, 2])
def test_stateful_dataloader_checkpoint_resumes_without_loss_or_repeat(num_workers):
    stateful = pytest.importorskip("torchdata.stateful_dataloader")

    def make():
        ds = D.range(30).global_shuffle(seed=6).distribute().map(lambda x: x + 100).batch(3)
        return stateful.StatefulDataLoader(hrt.IterableDataset(ds), batch_size=None, num_workers=num_workers)

    full = ids(make())
    loader = make()
    it = iter(loader)
    head = [next(it) for _ in range(4)]
    state = loader.state_dict()
    del it
    resumed = make()
    resumed.load_state_dict(state)
    rest = ids(resumed)
    assert ids(head) + rest == full
    assert sorted(full) == list(range(100, 130))


def _run_ddp(world: int, out: str, state: str | None = None) -> list[dict]:
    port = free_port()
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "src"), os.environ.get("PYTHONPATH", "")]),
        OMP_NUM_THREADS="1",
    )
    env.pop("WORLD_SIZE", None)
    env.pop("RANK", None)
    script = os.path.join(HERE, "ddp_worker.py")
    args = [str(world), str(port), out] + ([state] if state else [])
    procs = [
        subprocess.Popen([sys.executable, script, str(rank), *args], env=env, stderr=subprocess.PIPE)
        for rank in range(world)
    ]
    try:
        errors = [p.communicate(timeout=90)[1].decode() for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in procs), "\n".join(errors)[-3000:]
    results = []
    for rank in range(world):
        with open(os.path.join(out, f"rank{rank}.json")) as f:
            results.append(json.load(f))
    return results


@pytest.mark.slow
def test_ddp_two_ranks_gloo_train_on_disjoint_equal_shares_and_resume_elastically(tmp_path):
    first = tmp_path / "two"
    first.mkdir()
    ranks = _run_ddp(2, str(first))
    assert ranks[0]["steps"] == ranks[1]["steps"] == 10 and ranks[0]["len"] == 5  # 37 -> 19 each: 5 batches
    assert ranks[0]["weights"] == ranks[1]["weights"]  # gradients were all-reduced every step
    for epoch in range(2):
        seen = Counter(ranks[0]["seen"][epoch] + ranks[1]["seen"][epoch])
        assert sorted(seen) == list(range(37)) and sum(seen.values()) == 38  # one repeated filler
    assert ranks[0]["seen"][0] != ranks[0]["seen"][1]  # reshuffled each epoch, in agreement
    # Elastic: the state rank 0 saved after 3 steps (24 examples done) restores on a 1-rank job.
    state = tmp_path / "state.json"
    state.write_text(json.dumps(ranks[0]["state"]))
    assert ranks[1]["state"] == ranks[0]["state"]
    second = tmp_path / "one"
    second.mkdir()
    (alone,) = _run_ddp(1, str(second), str(state))
    done = [i for r in ranks for i in r["seen"][0][: 3 * 4]]
    assert sorted(done + alone["seen"][0]) == list(range(37))
    assert sorted(alone["seen"][1]) == list(range(37))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("prefetch", [0, 1, 3])
def test_cuda_loader_copies_ahead_and_its_state_counts_only_batches_handed_out(prefetch):
    def make():
        ds = D.range(40).global_shuffle(seed=8).map(lambda x: (x, np.full(4, x, np.float32))).batch(4)
        return hrt.to_torch(ds, device="cuda", prefetch=prefetch)

    loader = make()
    assert loader.pin_memory
    full = [(i.tolist(), x.device.type) for i, x in loader]
    assert all(device == "cuda" for _, device in full)
    loader = make()
    epoch = iter(loader)
    head = [next(epoch)[0].tolist() for _ in range(3)]
    resumed = make()
    resumed.load_state_dict(loader.state_dict())
    assert head + [i.tolist() for i, _ in resumed] == [i for i, _ in full]
