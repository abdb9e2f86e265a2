"""Serve a simulator app on loopback from a thread of this process, for as long as a block.

An evaluation that points an agent (or its child processes) at a simulated
endpoint needs a real URL, but not a second process: the app runs under
uvicorn on its own event loop in a daemon thread, on a port the kernel
picks, and stops when the block ends. Requests are served while the
caller's own loop is busy (or blocked in a subprocess).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import uvicorn
from starlette.applications import Starlette

__all__ = ["serving_in_thread"]


@contextlib.contextmanager
def serving_in_thread(
    app: Starlette, *, host: str = "127.0.0.1", startup_timeout_s: float = 30.0
) -> Iterator[str]:
    """Yield the ``/v1`` base URL of ``app`` served on ``host``; stop serving after."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"sim-{port}", daemon=True
    )
    thread.start()
    try:
        for _ in range(int(startup_timeout_s / 0.01)):
            if server.started or not thread.is_alive():
                break
            threading.Event().wait(0.01)  # a thread's start-up, not a test's wait
        if not server.started:
            raise RuntimeError(f"the simulator did not start on {host}:{port}")
        yield f"http://{host}:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
