import ast
import os
import signal
import sys
import threading

import pytest

# A shell without job control starts background commands (`make test &` from a script, some CI
# runners) with SIGINT ignored, and Python then never raises KeyboardInterrupt: every Ctrl-C test
# fails or hangs. Catching SIGINT again here also gives the tests' children the default disposition
# (an ignored signal stays ignored across exec; a caught one does not).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# CPython before 3.11.8 and 3.12.2 keeps the AST constructor's recursion count per interpreter, not
# per call (gh-106905): two threads inside ast.parse at once (a garbage collection can switch threads
# mid-parse) fail one of them with "SystemError: AST constructor recursion depth mismatch". In this
# process pytest parses source to show a failure, and so do threads it does not own: moto's werkzeug
# server compiling its routes, and pytest's own hook formatting a dying thread's traceback (3.11's
# traceback module parses each line it underlines). CI's Python is 3.11.7, where this twice ended a
# run mid-suite (test_layering's parse, then pytest's INTERNALERROR showing it). So the parses in
# this process take turns. The wait is bounded: a parse that waits 10 s goes ahead unserialised
# rather than deadlock behind a parse stuck in a finalizer.
if (3, 11) <= sys.version_info[:3] < (3, 11, 8) or (3, 12) <= sys.version_info[:3] < (3, 12, 2):
    _ast_parse = ast.parse
    _ast_turns = threading.RLock()

    def _parse_in_turn(*args, **kwargs):
        taken = _ast_turns.acquire(timeout=10)
        try:
            return _ast_parse(*args, **kwargs)
        finally:
            if taken:
                _ast_turns.release()

    ast.parse = _parse_in_turn

# Servers the tests start bind 127.0.0.1 only. Ray would otherwise give its nodes the machine's
# detected address (it reads this variable once, at import, and passes it on to every node and
# worker it starts): with it off, Ray treats the machine as a single host and uses the loopback.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SHARED = os.path.normpath(os.path.join(_ROOT, "..", "shared", "golden"))
# The files TensorFlow wrote (see golden/manifest.json): the shared folder when it is beside the repo,
# else the copy kept in tests/data so the suite never depends on where it is cloned.
GOLDEN = _SHARED if os.path.isdir(_SHARED) else os.path.join(_ROOT, "tests", "data", "golden")


@pytest.fixture
def golden_dir() -> str:
    return GOLDEN


@pytest.fixture(autouse=True)
def _fresh_executor_verdicts():
    """Each test starts with no verdicts kept from other tests' pipelines (``PROCESS.verdicts``: a
    pipeline built again with the same stages reuses one, and tests build the same pipelines)."""
    process = sys.modules.get("headrace.core.process")
    if process is not None and process.PROCESS.verdicts is not None:
        process.PROCESS.verdicts.clear()
    yield
