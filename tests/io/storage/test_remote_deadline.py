"""Issue 22, item 8: remote reads have one end-to-end budget (``storage_options`` 'deadline' and
'retries') across headrace, fsspec and botocore. Each case runs in a child process against a server
on 127.0.0.1 that the child starts: one that accepts connections and never answers, one that answers
every request with 503. The child's generous timeout only guards against a hang; no test times
anything."""

import os
import subprocess
import sys
import textwrap

import pytest

from headrace.core.errors import InvalidArgumentError
from headrace.io.storage.fs import read_budget

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

SERVERS = """
import http.server, socket, sys, threading
from headrace.io.storage import fs

def stalled_server():
    # Accepts connections and never answers (a stalled endpoint).
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held = []
    def accept():
        while True:
            connection, _ = listener.accept()
            held.append(connection)
    threading.Thread(target=accept, daemon=True).start()
    return listener.getsockname()[1]

requests = []

class Busy(http.server.BaseHTTPRequestHandler):
    def answer(self):
        requests.append(self.command)
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_GET = do_HEAD = do_PUT = do_POST = answer
    def log_message(self, *args):
        pass

def busy_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Busy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]

def s3_options(port, **budget):
    return {"key": "k", "secret": "s", "client_kwargs": {"endpoint_url": f"http://127.0.0.1:{port}",
            "region_name": "us-east-1"}, **budget}

def read(url, options):
    try:
        with fs.open_file(url, "rb", options) as f:
            f.read()
    except fs.RemoteReadError as exc:
        print("ERROR", exc.attempts, exc)
    else:
        print("READ")
"""


def run_child(body: str) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": os.path.join(ROOT, "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    completed = subprocess.run(
        [sys.executable, "-c", SERVERS + textwrap.dedent(body)],
        capture_output=True,
        text=True,
        timeout=240,  # a hang guard only: the budget below is seconds
        env=env,
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-4000:]
    return completed.stdout


@pytest.mark.parametrize("protocol", ["s3", "http"])
def test_a_stalled_endpoint_fails_within_the_deadline_naming_attempts_time_and_cause(protocol):
    pytest.importorskip("s3fs" if protocol == "s3" else "aiohttp")
    out = run_child(
        f"""
        port = stalled_server()
        budget = {{"deadline": 2, "retries": 3}}
        if "{protocol}" == "s3":
            read("s3://bucket/x.tfrecord", s3_options(port, **budget))
        else:
            read(f"http://127.0.0.1:{{port}}/x.tfrecord", budget)
        """
    )
    assert out.startswith("ERROR"), out
    assert "failed after" in out and " s (the " in out and "last cause:" in out, out


@pytest.mark.parametrize("protocol", ["s3", "http"])
def test_persistent_503s_do_not_multiply_retries_across_layers(protocol):
    pytest.importorskip("s3fs" if protocol == "s3" else "aiohttp")
    out = run_child(
        f"""
        fs.RETRY_BACKOFF_S = 0.01
        port = busy_server()
        budget = {{"deadline": 60, "retries": 3}}
        if "{protocol}" == "s3":
            read("s3://bucket/x.tfrecord", s3_options(port, **budget))
        else:
            read(f"http://127.0.0.1:{{port}}/x.tfrecord", budget)
        print("REQUESTS", len(requests))
        """
    )
    assert out.startswith("ERROR 3 "), out  # three attempts: headrace's budget, no layer retried
    assert "the budget of 3 attempts" in out and "last cause:" in out
    requests = int(out.split("REQUESTS ")[1])
    # Each attempt is one request (s3fs's HEAD) or two (fsspec's HTTP HEAD, then GET): before, the
    # three layers' retries multiplied into about 125 requests.
    assert 3 <= requests <= 6, out


def test_the_budget_is_checked():
    assert read_budget(None) == (60.0, 5)
    assert read_budget({"deadline": 0.5, "retries": 1}) == (0.5, 1)
    for bad in ({"deadline": 0}, {"deadline": "1"}, {"retries": 0}, {"retries": 2.0}, {"retries": True}):
        with pytest.raises(InvalidArgumentError, match="storage_options"):
            read_budget(bad)
