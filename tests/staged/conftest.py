"""A private redis-server for the staged tests (the queue tests' helper, reused)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "queues"))

from redisproc import REDIS, RedisProc, free_port


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if REDIS is None:
        pytest.skip("redis-server is not installed")
    server = RedisProc(Path(tmp_path_factory.mktemp("redis")), free_port())
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
