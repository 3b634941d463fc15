"""Every runtime test must leave no headrace thread, worker process or shared memory file behind."""

from __future__ import annotations

import gc
import os
import threading
import time

import pytest

from headrace.runtime import shm

#: How long a liveness wait (a worker exits, a file goes) may take before the test fails: a hang
#: guard, not a speed bound, so it is generous; what a test asserts is that the thing happens (speed
#: claims are measured in benchmarks/). Kept well inside the files' pytest timeouts.
HANG_GUARD_SECONDS = 30.0


def headrace_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("headrace") and t.is_alive()]


def own_segments() -> list[str]:
    prefix = f"{shm.PREFIX}{os.getpid()}-"
    return sorted(name for name in os.listdir(shm.SHM_DIR) if name.startswith(prefix))


def process_state(pid: int) -> str | None:
    """'R', 'S', 'Z' (zombie) ... from /proc, or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def wait_until(condition, seconds: float = HANG_GUARD_SECONDS) -> None:
    """Wait until ``condition()`` holds; fails if it still does not after ``seconds`` (a hang guard)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s (hang guard): {getattr(condition, '__doc__', '')}")
        time.sleep(0.01)


@pytest.fixture(autouse=True)
def leaves_nothing_behind():
    before = set(own_segments())
    yield
    gc.collect()

    def clean() -> bool:
        """headrace threads and shared memory files are gone"""
        return not headrace_threads() and set(own_segments()) <= before

    try:
        wait_until(clean)
    except AssertionError:
        pytest.fail(f"left behind: threads {headrace_threads()}, segments {set(own_segments()) - before}")


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children, ...), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    out, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def all_gone(pids) -> bool:
    """the processes are gone (not even zombies)"""
    return all(process_state(pid) is None for pid in pids)


def parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError):
        return None


def all_exited(pids) -> bool:
    """the processes exited: gone, or orphaned zombies that only init has left to reap"""
    return all(
        process_state(pid) is None or (process_state(pid) == "Z" and parent_of(pid) not in pids)
        for pid in pids
    )
