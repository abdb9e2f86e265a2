"""A real ``fixbugs serve`` app on loopback (uvicorn in a thread) and headless Chromium.

The agent is the real one on the bundled example; its models are
:class:`~agentrt.llm.FakeModel` (no weights to load). Skipped when Chromium
or Playwright is missing (install: ``apt-get install -y chromium`` and
``pip install playwright``; never ``playwright install``).
"""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _listening() -> socket.socket:
    """Bound and listening before uvicorn starts: early connections wait in the backlog."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    return s


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import uvicorn

    from agentrt.llm import FakeModel
    from agentrt.tokens import LatencyModel
    from fixbugs.run.context import Models
    from fixbugs.service import ServeConfig, build_app

    model = FakeModel(latency=LatencyModel(0.2, 0.0, 400.0))
    cfg = ServeConfig(workspace=tmp_path_factory.mktemp("svc"), workers=1, capacity=4)
    app, _, telemetry = build_app(cfg, models=Models(map=model, judge=model))
    sock = _listening()
    port = sock.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    t = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, name="uvicorn", daemon=True)
    t.start()
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    t.join(timeout=30)
    sock.close()
    telemetry.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    pw = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    with pw.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()
