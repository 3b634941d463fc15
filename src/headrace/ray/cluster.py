"""Connecting to Ray: one place that imports it, starts or joins a cluster, and explains failures."""

from __future__ import annotations

import concurrent.futures
import os
from typing import Any

from ..core.errors import InvalidArgumentError

#: How long connecting to a given address may take before it is reported unreachable.
CONNECT_TIMEOUT_S = 8.0


def import_ray() -> Any:
    try:
        import ray  # noqa: PLC0415 (optional dependency)
    except ImportError:
        raise ImportError("headrace.ray needs Ray: pip install 'headrace[ray]'") from None
    return ray


def _probe(address: str) -> None:
    """Raise when nothing answers at ``address`` (host:port of a GCS) within the timeout."""
    if "://" in address or address == "auto":
        return  # ray:// clients and "auto" are resolved by Ray itself
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise InvalidArgumentError(
            f"ray address {address!r} is not HOST:PORT (e.g. 127.0.0.1:6379) or 'auto'"
        )
    import socket  # noqa: PLC0415

    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S / 2).close()
    except OSError as exc:
        raise ConnectionError(
            f"cannot reach a Ray cluster at {address}: {exc}; start one with `ray start --head` "
            "or pass address=None to start a local one"
        ) from None


def connect(address: str | None = None) -> Any:
    """The ``ray`` module, initialised: joined to the cluster at ``address``, or, when ``address`` is
    None, to ``$RAY_ADDRESS`` if set (as inside a Ray job), else a new local instance. Never one
    that another program started on this machine: plain ``ray.init()`` joins the last cluster
    ``ray start`` left there, whose workers run that program's code in its folder (a relative path
    then names another file). An unreachable address raises ConnectionError within about 10 s.
    Already initialised: left as it is.

    >>> ray = connect()  # doctest: +SKIP
    """
    ray = import_ray()
    if ray.is_initialized():
        return ray
    if address is None and os.environ.get("RAY_ADDRESS"):
        address = os.environ["RAY_ADDRESS"]
    if address is None:
        # A local start runs here, not on the pool's thread: Ray asks the kernel to kill the processes
        # it starts (GCS, raylet) when their parent *thread* exits, so a cluster started on a pool
        # thread died with it, and the driver aborted 60 s later ("Failed to connect to GCS").
        ray.init(address="local", ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
        return ray
    _probe(address)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(
            ray.init, address=address, ignore_reinit_error=True, log_to_driver=False, include_dashboard=False
        )
        try:
            future.result(timeout=CONNECT_TIMEOUT_S)
        except concurrent.futures.TimeoutError:
            raise ConnectionError(
                f"no Ray cluster answered at {address} within {CONNECT_TIMEOUT_S:.0f} s; check the address "
                "(`ray status`) or pass address=None to start a local one"
            ) from None
        except ConnectionError as exc:
            raise ConnectionError(f"cannot join the Ray cluster at {address}: {exc}") from None
    return ray
