"""Starting worker processes without importing the user's main module.

Worker processes come from a *launcher*: one clean interpreter per parent process, running
:func:`main` of this module. It imports numpy, cloudpickle and headrace's worker once (the rest of
headrace while idle), then forks a worker for each request. The user's ``__main__`` is never imported in it (unlike
``multiprocessing``'s spawn and forkserver), so unguarded scripts, ``python - < script``, notebooks
and REPLs work; and a fork of this small single-threaded process takes milliseconds whatever the
user's script imports.

- Requests travel on a ``SOCK_SEQPACKET`` socket: the parent sends the worker's end of a fresh
  socket pair (``SCM_RIGHTS``), the launcher forks and answers with the worker's pid. It reaps its
  children and reports each exit status (negative: killed by that signal).
- Nothing outlives the parent: the launcher and every worker watch a *lifeline* pipe whose write end
  only the parent holds; when the parent dies (even by SIGKILL) the pipe reads EOF and they exit.
  The launcher then kills and reaps its workers and removes the parent's shared memory files. On
  Linux, workers also ask the kernel for SIGKILL when the launcher dies (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
from typing import Any

from ..core.errors import WorkerError, attempt

_PID = struct.Struct("<i")
_EXIT = struct.Struct("<ii")
START_SECONDS = 60.0  # a launcher that has not answered by then is reported as broken
# How long the report of a dead worker waits for the launcher to reap it and send its exit status. The
# launcher serves one thing at a time and may be importing headrace (seconds on a loaded machine) when
# a worker dies; only a failure waits, so the wait lets the error name the signal there too (1 s did not).
EXIT_STATUS_SECONDS = 10.0


# How the launcher starts: headrace's package __init__ imports every module (half a second on a busy
# machine), so the package is created empty and completed on the first use of one of its names;
# the launcher completes it while idle, so later workers inherit it.
_BOOT = """# headrace worker launcher
import importlib.util, sys
spec = importlib.util.find_spec("headrace")
package = importlib.util.module_from_spec(spec)
def complete(name):
    package.__dict__.pop("__getattr__", None)
    spec.loader.exec_module(package)
    return getattr(package, name)
package.__getattr__ = complete
sys.modules["headrace"] = package
from headrace.runtime.launcher import main
main(sys.argv[1:])
"""


def set_parent_death_signal() -> None:
    """Ask Linux to SIGKILL this process when its parent exits (a no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes  # noqa: PLC0415

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def watch_lifeline(fd: int) -> None:
    """Exit this process as soon as ``fd`` (the parent's lifeline) reads EOF: the parent is gone."""

    def watch() -> None:
        try:
            while os.read(fd, 1):
                pass
        except OSError:
            pass
        os._exit(70)

    threading.Thread(target=watch, name="headrace lifeline", daemon=True).start()


def exit_status(status: int) -> int:
    """``waitpid`` status as ``Popen.returncode``: the exit code, or minus the killing signal."""
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 255


class Launcher:
    """The parent's handle on its launcher process; thread safe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.exit_codes: dict[int, int] = {}
        self.control, child_control = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        lifeline_read, self.lifeline = os.pipe()
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        try:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _BOOT,
                    str(child_control.fileno()),
                    str(lifeline_read),
                    str(os.getpid()),
                ],
                pass_fds=(child_control.fileno(), lifeline_read),
                stdin=subprocess.DEVNULL,
                env=env,
                cwd="/",  # nothing from the user's directory can shadow numpy or headrace here
            )
        finally:
            child_control.close()
            os.close(lifeline_read)
        self.closed = False

    def alive(self) -> bool:
        """False once the launcher process has exited (killed with its process group, say)."""
        return not self.closed and self.process.poll() is None

    def start_worker(self, worker_end: socket.socket) -> int:
        """Fork a worker serving ``worker_end``; its pid."""
        with self.lock:
            if self.closed:
                raise WorkerError("the worker launcher was shut down")
            self.requests += 1
            request = _PID.pack(self.requests)
            try:
                socket.send_fds(self.control, [b"F" + request], [worker_end.fileno()])
            except OSError as exc:
                raise WorkerError(self._broken(f"could not reach it ({exc})")) from exc
            while True:
                message = self._receive(START_SECONDS)
                # An answer to an earlier request (interrupted by Ctrl-C while waiting) is skipped:
                # that worker's socket is closed, so it has exited.
                if message[:1] == b"P" and message[1 + _PID.size :] == request:
                    pid = _PID.unpack_from(message, 1)[0]
                    self.exit_codes.pop(pid, None)  # a reused pid: forget its predecessor
                    return pid

    def _receive(self, timeout: float | None) -> bytes:
        self.control.settimeout(timeout)
        try:
            message = self.control.recv(64)
        except TimeoutError as exc:
            raise WorkerError(self._broken(f"it did not answer within {timeout} s")) from exc
        except OSError as exc:
            raise WorkerError(self._broken(str(exc))) from exc
        if not message:
            raise WorkerError(self._broken("it exited"))
        if message[:1] == b"X":
            pid, code = _EXIT.unpack_from(message, 1)
            self.exit_codes[pid] = code
        return message

    def _broken(self, why: str) -> str:
        code = self.process.poll()
        return (
            f"the headrace worker launcher (process {self.process.pid}) failed: {why}"
            + (f"; exit code {code}" if code is not None else "")
            + ". Its error, if any, is on stderr; check that a fresh `python` can import headrace, or "
            "pass executor='thread'"
        )

    def exit_code(self, pid: int, timeout: float) -> int | None:
        """The exit status of worker ``pid`` once the launcher has reaped it (None if not by ``timeout``)."""
        with self.lock:
            if pid in self.exit_codes:
                return self.exit_codes[pid]
            if self.closed:
                return None
            deadline = _now() + timeout
            while pid not in self.exit_codes:
                left = deadline - _now()
                if left <= 0:
                    return None
                try:
                    self._receive(left)
                except WorkerError:
                    return None
            return self.exit_codes[pid]

    def shutdown(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
            self.control.close()  # the launcher kills its workers and exits
            os.close(self.lifeline)
        try:
            self.process.wait(2.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _now() -> float:
    import time  # noqa: PLC0415

    return time.monotonic()


# --- the launcher process ----------------------------------------------------------------------------
def _serve(control: socket.socket, lifeline: int, parent: int) -> None:
    children: set[int] = set()
    orphaned = False
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    # Ctrl-C and a scheduler's SIGTERM to the process group are the parent's to handle: the launcher
    # and its workers (which inherit this) leave when the parent does (the lifeline, then
    # PR_SET_PDEATHSIG), so a script that catches SIGTERM to save a checkpoint keeps its workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ, "control")
    selector.register(lifeline, selectors.EVENT_READ, "lifeline")
    selector.register(wake_read, selectors.EVENT_READ, "child")
    complete = "__getattr__" not in vars(sys.modules["headrace"])
    try:
        while True:
            ready = selector.select(None if complete else 0.05)
            if not ready and not complete:
                complete = True
                _complete_package()
            for key, _ in ready:
                if key.data == "child":
                    os.read(wake_read, 4096)
                    _reap(children, control)
                    continue
                if key.data == "lifeline":
                    orphaned = True  # EOF: the parent is gone
                    return
                try:
                    message, fds, _, _ = socket.recv_fds(control, 16, 4)
                except OSError:
                    return
                if not message:
                    return  # the parent shut us down
                launcher = os.getpid()
                pid = os.fork()
                if pid == 0:
                    _become_worker(launcher, fds[0], control, lifeline, (wake_read, wake_write), selector)
                for fd in fds:
                    os.close(fd)
                children.add(pid)
                control.send(b"P" + _PID.pack(pid) + message[1:])  # echoes the request number
    finally:
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
        if orphaned:
            # Nobody is left to remove the parent's shared memory files: we do.
            from .shm import PREFIX, cleanup  # noqa: PLC0415

            cleanup(f"{PREFIX}{parent}-")


def _complete_package() -> None:
    # The package the boot script made (never an import from here: runtime/ sits below the facade).
    attempt(lambda: sys.modules["headrace"].__getattr__("Dataset"))  # else workers complete it when needed


def _reap(children: set[int], control: socket.socket) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        try:
            control.send(b"X" + _EXIT.pack(pid, exit_status(status)))
        except OSError:
            pass


def _become_worker(
    launcher: int, fd: int, control: socket.socket, lifeline: int, wake: tuple, selector: Any
) -> None:
    code = 1
    try:
        selector.close()
        control.close()
        signal.set_wakeup_fd(-1)
        for extra in wake:
            os.close(extra)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        set_parent_death_signal()
        if os.getppid() != launcher:
            os._exit(code)  # the launcher died between fork and prctl
        watch_lifeline(lifeline)
        from .worker import serve  # noqa: PLC0415

        serve(socket.socket(fileno=fd))
        code = 0
    except BaseException:  # noqa: BLE001 (a worker never returns into the launcher's loop)
        import traceback  # noqa: PLC0415

        traceback.print_exc()
    finally:
        os._exit(code)


def main(argv: list[str]) -> None:
    control = socket.socket(fileno=int(argv[0]))
    lifeline = int(argv[1])
    # No parent-death signal here: it would follow the parent's thread that started us, and it
    # would kill us before we clean up. The lifeline tells us when the parent is gone.
    # Preload what every worker needs, once: forks share it copy-on-write.
    import cloudpickle  # noqa: F401, PLC0415
    import numpy  # noqa: F401, PLC0415

    from . import worker  # noqa: F401, PLC0415

    _serve(control, lifeline, int(argv[2]))


if __name__ == "__main__":
    main(sys.argv[1:])
