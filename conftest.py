"""Fixtures and markers that fixbugs's tests and agentrt's tests share.

One ``redis_url`` fixture (a private redis-server per test module) and two
markers for tests whose mechanism needs the machine's cooperation:

- ``@pytest.mark.needs_root``: the sandbox's containment needs root;
- ``@pytest.mark.needs_namespaces``: root with bubblewrap and setpriv
  (mount/pid/net namespaces and a uid of its own), found by running the
  sandbox's own probe.

A marked test is skipped, with a reason naming the missing mechanism, only
when that mechanism is missing. agentrt's tests must not depend on fixbugs:
nothing here imports fixbugs unless a test carries ``needs_namespaces``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# agentrt/tests/queues is on sys.path through the ``pythonpath`` setting of
# [tool.pytest.ini_options], so every test folder imports the same module.
from redisproc import REDIS, RedisProc, free_port
from userpython import user_python

pytest_plugins = ("pytester",)

NEEDS_ROOT = "needs root (the sandbox's containment runs commands as another user)"
NEEDS_NAMESPACES = "needs root with bubblewrap and setpriv (mount/pid/net namespaces, own uid)"


@pytest.fixture(autouse=True, scope="session")
def _private_index_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """FixBugs' runs under test keep their repository index in the session's folder,
    never in the user's ``~/.cache/fixbugs/index``."""
    before = os.environ.get("FIXBUGS_INDEX_DIR")
    os.environ["FIXBUGS_INDEX_DIR"] = str(tmp_path_factory.mktemp("index-cache"))
    yield
    if before is None:
        os.environ.pop("FIXBUGS_INDEX_DIR", None)
    else:
        os.environ["FIXBUGS_INDEX_DIR"] = before


# Endpoints a run discovers (agentrt._discovery): under test, none from the
# developer's environment (a provider key would send a test's prompts out) and
# no probe of the machine's own model-server ports; a test that wants one sets it.
_DISCOVERED = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "ANTHROPIC_API_KEY")


@pytest.fixture(autouse=True, scope="session")
def _no_discovered_endpoints() -> Iterator[None]:
    saved = {k: os.environ.pop(k) for k in _DISCOVERED if k in os.environ}
    before = os.environ.get("AGENTRT_LOCAL_PORTS")
    os.environ["AGENTRT_LOCAL_PORTS"] = ""
    yield
    os.environ.update(saved)
    if before is None:
        os.environ.pop("AGENTRT_LOCAL_PORTS", None)
    else:
        os.environ["AGENTRT_LOCAL_PORTS"] = before


@pytest.fixture(autouse=True, scope="session")
def _lean_user_python() -> Iterator[None]:
    """A test that names no interpreter has FixBugs find one on PATH, as a user's run
    does: there, first, the suite's user Python (:mod:`userpython`), not the machine's
    python3 with whatever plugins the machine holds."""
    before = os.environ.get("PATH", "")
    found = user_python()
    if found != Path(sys.executable):
        os.environ["PATH"] = os.pathsep.join([str(found.parent), before])
    yield
    os.environ["PATH"] = before


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"needs_root: skipped unless run as root; {NEEDS_ROOT}")
    config.addinivalue_line(
        "markers", f"needs_namespaces: skipped unless the sandbox can isolate; {NEEDS_NAMESPACES}"
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a marked test whose mechanism is missing, before its fixtures run."""
    if item.get_closest_marker("needs_root") is not None and os.geteuid() != 0:
        pytest.skip(NEEDS_ROOT)
    if item.get_closest_marker("needs_namespaces") is not None:
        from fixbugs.sandbox import probe  # lazily: only a fixbugs test carries this marker

        found = probe()
        if not (found.namespaces and found.separate_uid):
            pytest.skip(NEEDS_NAMESPACES)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a private redis-server that lives as long as the test module."""
    if REDIS is None:
        pytest.skip("needs redis-server (not installed)")
    server = RedisProc(Path(tmp_path_factory.mktemp("redis")), free_port())
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
