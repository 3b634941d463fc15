import contextlib
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pytest

import headrace as hr
from headrace.ops.cache import CacheWarning
from headrace.ops.support import cache_file
from headrace.ops.support.cache_file import CacheFileError, CacheFileReader
from tests.helpers.checkpoint import ROOT, check_checkpoints, check_fresh_process
from tests.helpers.elements import assert_elements_equal


class Counting:
    """A map function that counts its calls: tells reads of the input from reads of the cache."""

    def __init__(self):
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        return x


def values(ds) -> list[int]:
    return [int(x) for x in ds]


def test_first_complete_pass_fills_later_passes_read():
    f = Counting()
    ds = hr.Dataset.range(5).map(f).cache()
    assert values(ds) == [0, 1, 2, 3, 4] and f.calls == 5
    assert values(ds) == [0, 1, 2, 3, 4] and f.calls == 5
    assert values(ds.repeat(3)) == [0, 1, 2, 3, 4] * 3 and f.calls == 5
    assert ds.node.store.elements is not None and len(ds.node.store.elements) == 5


def test_repeat_epochs_read_from_the_cache_filled_by_the_first():
    f = Counting()
    assert values(hr.Dataset.range(4).map(f).cache().repeat(3)) == [0, 1, 2, 3] * 3
    assert f.calls == 4


def test_a_partial_pass_leaves_no_partial_cache():
    f = Counting()
    ds = hr.Dataset.range(6).map(f).cache()
    assert values(ds.take(2)) == [0, 1]
    assert ds.node.store.elements is None
    assert values(ds) == list(range(6)) and f.calls == 2 + 6
    assert values(ds) == list(range(6)) and f.calls == 8


def test_cache_freezes_an_upstream_shuffle():
    ds = hr.Dataset.range(20).shuffle(20, seed=4).cache()
    first = values(ds)
    assert values(ds) == first and values(ds.repeat(2)) == first * 2
    uncached = hr.Dataset.range(20).shuffle(20, seed=4)
    assert values(uncached) != values(uncached)  # without the cache each pass reshuffles


def test_structures_and_store_clear():
    ds = hr.Dataset.range(3).map(lambda x: {"x": x, "s": b"v", "a": np.full(2, x)}).cache()
    first = list(ds)
    again = list(ds)
    assert [e["a"].tolist() for e in again] == [e["a"].tolist() for e in first]
    ds.node.store.clear()
    assert ds.node.store.elements is None and len(list(ds)) == 3


def test_errors_during_the_first_pass_lose_only_that_element():
    def f(x):
        if x == 2:
            raise ValueError("bad")
        return x

    ds = hr.Dataset.range(5).map(f).cache()
    assert values(ds.ignore_errors()) == [0, 1, 3, 4]
    g = Counting()
    assert values(ds.map(g)) == [0, 1, 3, 4]  # read from the cache: no error again


def test_filename_must_be_a_path():
    with pytest.raises(hr.InvalidArgumentError, match="filename=3"):
        hr.Dataset.range(3).cache(3)


def test_the_store_stays_in_its_process():
    ds = hr.Dataset.range(3).cache()
    values(ds)
    copy = pickle.loads(pickle.dumps(ds.node))
    assert ds.node.store.elements is not None and copy.store.elements is None
    assert values(hr.Dataset(copy)) == [0, 1, 2]


def test_spec_and_cardinality_pass_through():
    ds = hr.Dataset.range(7).batch(2).cache()
    assert ds.cardinality() == 4 and ds.element_spec == hr.TensorSpec((None,), "int64")


def make():
    return hr.Dataset.range(13).shuffle(6, seed=2).map(lambda x: (x, np.float32(x) / 2)).cache()


def test_checkpoints_while_filling_replay_the_input():
    # Every iterator of a new pipeline fills its own cache: restores replay the input.
    check_checkpoints(make)
    check_checkpoints(lambda: make().repeat(2))


def test_checkpoints_reading_from_a_filled_cache():
    shared = make()
    assert len(list(shared)) == 13 and shared.node.store.elements is not None
    check_checkpoints(lambda: shared)
    repeated = shared.repeat(2)
    check_checkpoints(lambda: repeated)


def test_restore_replays_only_up_to_the_position_and_refills():
    f = Counting()
    ds = hr.Dataset.range(10).map(f).cache()
    it = iter(hr.Dataset.range(10).map(Counting()).cache())
    [next(it) for _ in range(4)]
    state = json.loads(json.dumps(it.get_state()))
    assert state["state"] == {"mode": "write", "position": 4, "start": state["state"]["start"]}
    restored = iter(ds)
    restored.set_state(state)
    assert f.calls == 4  # the replay
    assert [int(x) for x in restored] == [4, 5, 6, 7, 8, 9] and f.calls == 10
    assert values(ds) == list(range(10)) and f.calls == 10  # the restored pass filled the cache


def test_read_state_restores_where_the_cache_is_empty():
    filled = make()
    order = [int(x) for x, _ in filled]
    it = iter(filled)
    [next(it) for _ in range(5)]
    state = it.get_state()
    assert state["state"]["mode"] == "read"
    fresh = iter(make())  # a new node: empty cache, so the saved pass is replayed from its start
    fresh.set_state(state)
    assert [int(x) for x, _ in fresh] == order[5:]


def test_replay_follows_the_pass_that_filled_the_cache():
    def build():
        return hr.Dataset.range(15).shuffle(15, seed=7).cache()

    filled = build()
    values(filled.take(3))  # an abandoned pass: shuffle iteration 0, nothing cached
    order = values(filled)  # shuffle iteration 1 fills the cache
    it = iter(filled)
    [next(it) for _ in range(4)]
    fresh = iter(build())
    fresh.set_state(it.get_state())
    assert [int(x) for x in fresh] == order[4:]
    assert order != values(build())  # a new node's first pass is iteration 0: another order


def test_replay_that_comes_up_short_is_a_checkpoint_error():
    it = iter(hr.Dataset.range(10).cache())
    [next(it) for _ in range(6)]
    state = it.get_state()
    state["state"]["position"] = 50
    fresh = iter(hr.Dataset.range(10).cache())
    with pytest.raises(hr.CheckpointError, match="ended after 10 elements"):
        fresh.set_state(state)


def test_checkpoint_in_a_fresh_process():
    check_fresh_process("tests.ops.test_cache:make", after=7)
    check_fresh_process("tests.ops.test_cache:make_repeated", after=17)


def make_repeated():
    return make().repeat(2)


# --- memory cache over parallel stages -------------------------------------------------------------------
class Recording:
    """A thread-safe map function that records its inputs."""

    def __init__(self):
        self.seen: list[int] = []

    def __call__(self, x):
        self.seen.append(int(x))  # list.append is atomic under the GIL
        return x * 3


def test_memory_cache_over_a_parallel_map_reads_the_input_once():
    f = Recording()
    ds = hr.Dataset.range(40).map(f, num_parallel_calls=2, executor="thread").cache()
    assert values(ds.repeat(3)) == [3 * i for i in range(40)] * 3
    assert sorted(f.seen) == list(range(40))


def make_parallel():
    return (
        hr.Dataset.range(23)
        .shuffle(7, seed=3)
        .map(lambda x: (x, np.float32(x)), num_parallel_calls=2, executor="thread")
        .cache()
    )


def test_memory_cache_over_a_parallel_map_checkpoints():
    check_checkpoints(make_parallel, stride=2)
    shared = make_parallel()
    values_first = [int(x) for x, _ in shared]
    assert len(values_first) == 23 and shared.node.store.elements is not None
    check_checkpoints(lambda: shared.repeat(2), stride=3)


def test_memory_cache_over_a_process_map():
    ds = hr.Dataset.range(30).map(lambda x: x * 2, num_parallel_calls=2, executor="process").cache()
    assert values(ds) == [2 * i for i in range(30)]
    assert values(ds.repeat(2)) == [2 * i for i in range(30)] * 2
    check_fresh_process("tests.ops.test_cache:make_process_map", after=9)


def make_process_map():
    return hr.Dataset.range(20).map(lambda x: x + 1, num_parallel_calls=2, executor="process").cache()


# --- disk cache ------------------------------------------------------------------------------------------
def listing(directory) -> list[str]:
    return sorted(os.listdir(directory))


def counted(path, f=None, n=10):
    f = f or Counting()
    return hr.Dataset.range(n).map(f).cache(str(path)), f


def test_disk_first_pass_writes_later_passes_read(tmp_path):
    path = tmp_path / "train.hrcache"
    ds, f = counted(path)
    it = iter(ds)
    assert [int(next(it)) for _ in range(9)] == list(range(9))
    assert listing(tmp_path) != ["train.hrcache"] and not path.exists()  # lock and temporary file only
    assert [int(x) for x in it] == [9]
    assert listing(tmp_path) == ["train.hrcache"] and f.calls == 10
    assert values(ds) == list(range(10)) and values(ds.repeat(3)) == list(range(10)) * 3 and f.calls == 10
    again, g = counted(path)  # a new pipeline with the same fingerprint reuses the file
    assert values(again) == list(range(10)) and g.calls == 0


def test_disk_repeat_writes_in_epoch_one_and_reads_after(tmp_path):
    ds, f = counted(tmp_path / "c", n=6)
    assert values(ds.repeat(3)) == list(range(6)) * 3 and f.calls == 6


def test_disk_partial_pass_leaves_nothing_behind(tmp_path):
    ds, f = counted(tmp_path / "c")
    assert values(ds.take(3)) == [0, 1, 2]
    assert listing(tmp_path) == []
    assert values(ds) == list(range(10)) and f.calls == 13 and listing(tmp_path) == ["c"]


def test_disk_elements_round_trip_with_their_types(tmp_path):
    def element(x):
        i = int(x)
        return {"image": np.full((2, 3), i, np.uint8), "label": x, "name": b"n%d" % i, "ragged": np.arange(i)}

    ds = hr.Dataset.range(7).map(element).cache(str(tmp_path / "c"))
    first = list(ds)
    assert_elements_equal(list(ds), first)
    assert ds.element_spec == hr.Dataset.range(7).map(element).element_spec


def test_disk_fingerprint_change_rebuilds_instead_of_reusing(tmp_path):
    path = str(tmp_path / "c")

    def scaled(factor):
        return lambda x: x * factor

    assert values(hr.Dataset.range(4).map(scaled(2)).cache(path)) == [0, 2, 4, 6]
    with pytest.warns(CacheWarning, match="written by a different pipeline"):
        assert values(hr.Dataset.range(4).map(scaled(3)).cache(path)) == [0, 3, 6, 9]  # tf.data: [0, 2, 4, 6]
    assert values(hr.Dataset.range(4).map(scaled(3)).cache(path)) == [0, 3, 6, 9]
    with pytest.warns(CacheWarning, match="different pipeline"):
        assert values(hr.Dataset.range(5).map(scaled(3)).cache(path)) == [0, 3, 6, 9, 12]
    with pytest.warns(CacheWarning, match="different pipeline"):
        assert len(values(hr.Dataset.range(5).map(scaled(3)).batch(2).unbatch().cache(path))) == 5


def test_disk_options_that_change_the_output_are_part_of_the_key(tmp_path):
    path = str(tmp_path / "c")

    def build(seed):
        options = hr.Options()
        options.seed = seed
        return hr.Dataset.range(30).shuffle(30).cache(path).with_options(options)

    first = values(build(1))
    assert values(build(1)) == first
    with pytest.warns(CacheWarning, match="different pipeline"):
        assert values(build(2)) != first


def test_disk_two_iterators_at_once_one_writes_the_other_reads_the_input(tmp_path):
    path = tmp_path / "c"
    ds, f = counted(path)
    writer, other = iter(ds), iter(ds)
    assert (writer.root.mode, other.root.mode) == ("write", "pass")
    got_writer, got_other = [], []
    for _ in range(10):  # interleaved: the reader never sees the partial file
        got_writer.append(int(next(writer)))
        got_other.append(int(next(other)))
    assert got_writer == got_other == list(range(10)) and f.calls == 20
    assert list(writer) == [] and list(other) == []
    assert listing(tmp_path) == ["c"]
    third = iter(ds)
    assert third.root.mode == "read" and values(ds) == list(range(10)) and f.calls == 20


def test_disk_unfinished_iterator_releases_the_lock_when_dropped(tmp_path):
    ds, _ = counted(tmp_path / "c")
    it = iter(ds)
    next(it)
    del it  # closed when collected: the lock and the temporary file go
    assert listing(tmp_path) == []
    assert iter(ds).root.mode == "write"


def slow_square(x):
    time.sleep(0.003)
    return x * x


def slow_pipeline(path):
    return hr.Dataset.range(300).map(slow_square).cache(path)


def run_child(code: str, **kwargs):
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def test_disk_sigkill_mid_epoch_leaves_no_cache_and_the_next_run_rebuilds(tmp_path):
    path = str(tmp_path / "c")
    child = run_child(
        "import sys\nfrom tests.ops.test_cache import slow_pipeline\n"
        f"for x in slow_pipeline({path!r}):\n    print(int(x), flush=True)\n"
    )
    for _ in range(40):
        assert child.stdout.readline(), child.stderr.read()
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    left = listing(tmp_path)
    assert "c" not in left and "c.lock" in left and any(n.startswith("c.incomplete-") for n in left)
    lock = json.load(open(path + ".lock"))
    assert lock["pid"] == child.pid
    # The next run takes the dead writer's lock over, rebuilds and cleans up without help.
    with no_cache_warning():
        assert values(slow_pipeline(path)) == [i * i for i in range(300)]
    assert listing(tmp_path) == ["c"]
    with CacheFileReader(path) as reader:
        assert reader.records == 300
    # Another process finds the complete cache and reads it (the fingerprint is the same there).
    reader_child = run_child(
        f"from tests.ops.test_cache import slow_pipeline\nit = iter(slow_pipeline({path!r}))\n"
        "print(it.root.mode, sum(int(x) for x in it))"
    )
    out, err = reader_child.communicate(timeout=60)
    assert out.split() == ["read", str(sum(i * i for i in range(300)))], err


@contextlib.contextmanager
def no_cache_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    assert not [w for w in caught if issubclass(w.category, CacheWarning)], [str(w.message) for w in caught]


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda p: os.truncate(p, os.path.getsize(p) - 50), "no end marker"),
        (lambda p: open(p, "r+b").write(b"GARBAGE!"), "not a headrace cache file"),
        (
            lambda p: (lambda f: (f.seek(8), f.write(b"\x07\0\0\0"), f.close()))(open(p, "r+b")),
            "format version 7",
        ),
    ],
    ids=["truncated", "bad-magic", "version"],
)
def test_disk_damaged_file_is_rebuilt_with_a_warning(tmp_path, damage, message):
    ds, f = counted(tmp_path / "c")
    values(ds)
    damage(str(tmp_path / "c"))
    with pytest.warns(CacheWarning, match=message) as caught:
        assert values(ds) == list(range(10))
    assert str(tmp_path / "c") in str(caught[0].message) and f.calls == 20
    assert values(ds) == list(range(10)) and f.calls == 20  # rebuilt


def test_disk_damage_found_while_reading_names_the_file_and_offset(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_file, "BLOCK_RECORDS", 4)
    ds, _ = counted(tmp_path / "c")
    values(ds)
    with CacheFileReader(str(tmp_path / "c")) as reader:
        offset = reader.blocks[1][0]
    with open(tmp_path / "c", "r+b") as f:
        f.seek(offset + 100)
        f.write(b"\xee")
    it = iter(ds)
    assert [int(next(it)) for _ in range(4)] == [0, 1, 2, 3]
    with pytest.raises(CacheFileError, match=f"{tmp_path / 'c'}: block 1 checksum mismatch.*offset {offset}"):
        next(it)


def test_disk_path_errors_name_the_path(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(hr.InvalidArgumentError, match="afile is a file"):
        hr.Dataset.range(3).cache(str(tmp_path / "afile" / "sub" / "c"))
    with pytest.raises(hr.InvalidArgumentError, match="names a directory"):
        hr.Dataset.range(3).cache(str(tmp_path))
    # (remote caches that work: tests/io/storage/test_remote.py)
    with pytest.raises(hr.InvalidArgumentError, match="nosuchprotocol://bucket/c"):
        hr.Dataset.range(3).cache("nosuchprotocol://bucket/c")


UNWRITABLE_CHILD = """
import os, sys
import headrace as hr
directory = sys.argv[1]
try:
    hr.Dataset.range(3).cache(os.path.join(directory, "ro", "c"))
except hr.InvalidArgumentError as exc:
    print("construct:", exc)
ds = hr.Dataset.range(3).cache(os.path.join(directory, "later", "c"))
os.chmod(os.path.join(directory, "later"), 0o500)
try:
    iter(ds)
except PermissionError as exc:
    print("iterate:", exc)
"""


def test_disk_unwritable_directory_is_a_clear_error_naming_the_path():
    directory = tempfile.mkdtemp()
    try:
        os.chmod(directory, 0o755)
        os.mkdir(os.path.join(directory, "ro"), 0o500)
        os.mkdir(os.path.join(directory, "later"), 0o755)
        command = [sys.executable, "-c", UNWRITABLE_CHILD, directory]
        if os.geteuid() == 0:  # root ignores permissions unless it gives up the capability to
            if shutil.which("setpriv") is None:
                pytest.skip("running as root without setpriv: cannot drop the permission override")
            command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", *command]
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines[0].startswith("construct:") and f"{directory}/ro is not writable" in lines[0]
        assert lines[1].startswith("iterate:") and "cannot create the lock file" in lines[1]
        assert f"{directory}/later/c.lock" in lines[1]
    finally:
        for sub in ("ro", "later"):
            os.chmod(os.path.join(directory, sub), 0o755)
        shutil.rmtree(directory)


def test_disk_elements_it_cannot_store_are_named_and_leave_nothing(tmp_path):
    ds = (
        hr.Dataset.range(5)
        .map(lambda x: (x, [1, 2]) if x == 3 else (x, np.zeros(2)))
        .cache(str(tmp_path / "c"))
    )
    it = iter(ds)
    assert [int(next(it)[0]) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(hr.InvalidArgumentError, match=r"cache\('.*'\): element 3\[1\] is a list"):
        next(it)
    assert listing(tmp_path) == []


# --- disk cache checkpoints ------------------------------------------------------------------------------
def make_disk(path):
    return hr.Dataset.range(13).shuffle(6, seed=2).map(lambda x: (x, np.float32(x) / 2)).cache(str(path))


def test_disk_checkpoints_reading_a_complete_file(tmp_path):
    check_checkpoints(lambda: make_disk(tmp_path / "c"))  # the first run writes, the rest read
    check_checkpoints(lambda: make_disk(tmp_path / "c").repeat(2))
    parallel = tmp_path / "p"
    check_checkpoints(
        lambda: (
            hr.Dataset.range(17)
            .map(lambda x: x * 2, num_parallel_calls=2, executor="thread")
            .cache(str(parallel))
        ),
        stride=2,
    )


def test_disk_checkpoints_while_writing_continue_from_the_input(tmp_path):
    path = tmp_path / "c"

    def fresh():  # every iterator starts with no file: every saved state is a writing pass's
        if path.exists():
            path.unlink()
        return make_disk(path)

    check_checkpoints(fresh)
    check_checkpoints(lambda: fresh().repeat(2), stride=3)

    def fresh_parallel():
        if path.exists():
            path.unlink()
        return (
            hr.Dataset.range(15)
            .map(lambda x: x + 1, num_parallel_calls=2, executor="thread")
            .cache(str(path))
        )

    check_checkpoints(fresh_parallel, stride=2)


def test_disk_restore_while_writing_does_not_write_that_pass_the_next_one_does(tmp_path):
    ds, f = counted(tmp_path / "c")
    it = iter(ds)
    [next(it) for _ in range(4)]
    state = json.loads(json.dumps(it.get_state()))
    assert sorted(state["state"]) == ["file", "mode", "parent", "position", "start"]
    assert state["state"]["mode"] == "write" and state["state"]["file"] is None
    assert isinstance(state["state"]["parent"], dict) and isinstance(state["state"]["start"], dict)
    it.close()
    assert listing(tmp_path) == []
    restored = iter(ds)
    restored.set_state(state)
    assert restored.root.mode == "pass"
    assert [int(x) for x in restored] == [4, 5, 6, 7, 8, 9] and listing(tmp_path) == []
    assert values(ds) == list(range(10)) and listing(tmp_path) == ["c"]


def test_disk_restore_while_reading_is_a_seek(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_file, "BLOCK_RECORDS", 4)
    ds, f = counted(tmp_path / "c", n=40)
    values(ds)
    it = iter(ds)
    [next(it) for _ in range(27)]
    state = it.get_state()
    assert state["state"]["mode"] == "read" and state["state"]["position"] == 27
    assert state["state"]["parent"] is None and state["state"]["file"] == it.root.file_id
    blocks_read = []
    original = CacheFileReader.read_block
    monkeypatch.setattr(
        CacheFileReader, "read_block", lambda self, i: blocks_read.append(i) or original(self, i)
    )
    fresh, g = counted(tmp_path / "c", n=40)
    restored = iter(fresh)
    restored.set_state(state)
    assert blocks_read == [6] and g.calls == 0
    assert [int(x) for x in restored] == list(range(27, 40)) and blocks_read == [6, 7, 8, 9]


def test_disk_read_state_without_its_file_replays_and_rewrites(tmp_path):
    path = tmp_path / "c"
    order = values(make_disk(path).map(lambda x, y: x))
    it = iter(make_disk(path))
    [next(it) for _ in range(5)]
    state = it.get_state()
    it.close()
    path.unlink()
    fresh = iter(make_disk(path))
    fresh.set_state(state)
    assert [int(x) for x, _ in fresh] == order[5:]
    assert path.exists() and values(make_disk(path).map(lambda x, y: x)) == order  # rewritten by the replay


def make_disk_from_env():
    return make_disk(os.environ["HEADRACE_TEST_CACHE"])


def make_disk_writing_from_env():
    path = os.environ["HEADRACE_TEST_CACHE"]
    if os.path.exists(path):
        os.unlink(path)
    return make_disk(path)


def test_disk_checkpoint_in_a_fresh_process(tmp_path, monkeypatch):
    monkeypatch.setenv("HEADRACE_TEST_CACHE", str(tmp_path / "c"))
    check_fresh_process("tests.ops.test_cache:make_disk_from_env", after=7)
    check_fresh_process("tests.ops.test_cache:make_disk_writing_from_env", after=5)


def test_disk_skip_after_a_complete_cache_seeks(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_file, "BLOCK_RECORDS", 4)
    ds, f = counted(tmp_path / "c", n=30)
    assert values(ds.skip(25)) == [25, 26, 27, 28, 29] and f.calls == 30  # writing: skip reads through
    blocks_read = []
    original = CacheFileReader.read_block
    monkeypatch.setattr(
        CacheFileReader, "read_block", lambda self, i: blocks_read.append(i) or original(self, i)
    )
    assert values(ds.skip(25)) == [25, 26, 27, 28, 29] and blocks_read == [6, 7] and f.calls == 30
    assert values(ds.skip(40)) == [] and values(ds.skip(3).take(2)) == [3, 4]


def test_disk_cache_streams_one_block_at_a_time(tmp_path, monkeypatch):
    import tracemalloc

    monkeypatch.setattr(cache_file, "BLOCK_BYTES", 1 << 20)
    ds = hr.Dataset.range(200).map(lambda x: np.full(100_000, x % 256, np.uint8)).cache(str(tmp_path / "c"))
    for _ in range(2):  # writing, then reading: 20 MB pass through, about one 1 MB block is held
        tracemalloc.start()
        try:
            total = sum(int(a[0]) for a in ds)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert total == sum(i % 256 for i in range(200))
        assert peak < 4 << 20, f"peak {peak / 2**20:.1f} MiB while 20 MB passed"
    assert os.path.getsize(tmp_path / "c") >= 200 * 100_000


def test_disk_write_failure_mid_pass_warns_and_continues_uncached(tmp_path, monkeypatch):
    import errno

    monkeypatch.setattr(cache_file, "BLOCK_RECORDS", 3)
    original = cache_file.CacheFileWriter._write
    writes = []

    def failing(self, pieces):
        writes.append(len(pieces))
        if len(writes) == 3:  # the header went through, then a block; the next block hits a full disk
            raise cache_file.write_error(OSError(errno.ENOSPC, "No space left on device"), self.temp, "write")
        return original(self, pieces)

    monkeypatch.setattr(cache_file.CacheFileWriter, "_write", failing)
    ds, f = counted(tmp_path / "c")
    with pytest.warns(CacheWarning, match="No space left on device.*continues without writing the cache"):
        assert values(ds) == list(range(10))
    assert listing(tmp_path) == []  # no partial file, no lock
    monkeypatch.setattr(cache_file.CacheFileWriter, "_write", original)
    assert values(ds) == list(range(10)) and listing(tmp_path) == ["c"] and f.calls == 20


def test_disk_cache_of_a_pipeline_that_was_already_iterated(tmp_path):
    """Issue 11: cache(path) after the same pipeline was iterated once raised RecursionError (state
    derived at run time was kept on the nodes and hashed into the fingerprint)."""
    ds = hr.Dataset.range(40).map(lambda x: x * 2).filter(lambda x: x % 3 > 0).batch(4).prefetch(2)
    first = [x.tolist() for x in ds]
    path = str(tmp_path / "c")
    for _ in range(2):  # a cold pass writes the file, a warm one reads it
        with no_cache_warning():
            assert [x.tolist() for x in ds.cache(path)] == first
    assert os.path.exists(path)
    simple = hr.Dataset.range(10).map(lambda x: x + 1)
    assert values(simple) == list(range(1, 11))
    assert values(simple.cache(str(tmp_path / "d"))) == list(range(1, 11))


def test_a_dead_writers_temporary_is_reclaimed_by_the_next_writer(tmp_path):
    """A temporary whose lock is gone (taken over and released since) is still reclaimed."""
    from tests.io.storage.test_publication import dead_temporary  # noqa: PLC0415

    path = str(tmp_path / "c")
    stale = dead_temporary(path)
    open(stale, "wb").close()
    with no_cache_warning():
        assert values(hr.Dataset.range(5).cache(path)) == list(range(5))
    assert sorted(os.listdir(tmp_path)) == ["c"]


def test_a_full_disk_names_the_cache_file_and_leaves_nothing(tmp_path):
    """A real write failure (the file size limit stands in for a full disk): the warning names the
    file, the pipeline goes on uncached, and no temporary file or lock remains."""
    path = str(tmp_path / "c")
    child = run_child(
        "import resource, signal, warnings\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))\n"
        "import numpy as np, headrace as hr\n"
        "ds = hr.Dataset.range(100).map(lambda i: np.full(10_000, i, np.uint8)).cache(" + repr(path) + ")\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    total = sum(int(x[0]) for x in ds)\n"
        "print(total)\n"
        "print([str(w.message) for w in caught])\n"
    )
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    total, messages = out.splitlines()
    assert int(total) == sum(range(100))
    assert "File too large" in messages and path in messages
    assert listing(tmp_path) == []


def test_memory_cache_hands_out_read_only_copies_it_owns():
    # An in-place op in a training loop must not change the next epoch's data.
    source = np.zeros((3, 2))
    spec = hr.TensorSpec((2,), np.float64)
    ds = hr.Dataset.from_generator(lambda: iter(source), output_signature=spec).cache()
    for _epoch in range(2):
        for element in ds:
            assert not element.flags.writeable and not np.shares_memory(element, source)
            with pytest.raises(ValueError, match="read-only"):
                element += 1
    source += 5  # the producer reusing its buffer cannot reach the cache either
    assert [e.tolist() for e in ds] == [[0.0, 0.0]] * 3


def test_memory_cache_gives_fresh_dicts_each_pass():
    ds = hr.Dataset.from_tensor_slices({"x": np.arange(3)}).cache()
    first = list(ds)
    first[0]["x"] = 99  # editing the dict handed out must not reach the cached one
    second = list(ds)
    assert [int(e["x"]) for e in second] == [0, 1, 2] and second[0] is not first[0]


def test_memory_cache_read_element_by_element_matches_chunks():
    from headrace.core.run import Run

    ds = hr.Dataset.from_tensor_slices({"x": np.arange(5)}).cache()
    list(ds)  # fills the cache
    it = ds.node.iterator(Run())
    first = [next(it), next(it)]  # the per-element path of a reading pass
    first[0]["x"] = 99  # a fresh dict each time, as from next_chunk
    state = it.get_state()
    assert state["position"] == 2 and it.produced == 2
    rest = it.next_chunk(10)
    assert [int(e["x"]) for e in rest] == [2, 3, 4]
    again = ds.node.iterator(Run())
    again.set_state(state)
    assert [int(next(again)["x"]) for _ in range(3)] == [2, 3, 4]
    with pytest.raises(StopIteration):
        next(again)
