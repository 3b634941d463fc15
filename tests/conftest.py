import os
import signal

import pytest

# A shell without job control starts background commands (`make test &` from a script, some CI
# runners) with SIGINT ignored, and Python then never raises KeyboardInterrupt: every Ctrl-C test
# fails or hangs, and their pytest-timeout alarms land inside other code (a CPython 3.11.7 run then
# died with "AST constructor recursion depth mismatch"). Catching SIGINT again here also gives the
# tests' children the default disposition (an ignored signal stays ignored across exec; a caught one
# does not).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

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
