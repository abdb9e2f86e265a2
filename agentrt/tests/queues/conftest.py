"""Fixtures for queue backend tests: one private redis-server per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
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
