"""Keys name tenants; keys are never shown; the retention rule is a pure function."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixbugs.errors import InputError
from fixbugs.service.auth import DEFAULT_TENANT, OPEN_TENANT, ApiKeys, parse_keys
from fixbugs.service.job_index import JobIndex, JobMeta, expired


def test_keys_come_as_tenant_key_pairs_in_lines_or_commas() -> None:
    text = "# ops\nacme:k1\nglobex k2\n\nbare-key,initech:k3"
    assert parse_keys(text, source="f") == {
        "k1": "acme",
        "k2": "globex",
        "bare-key": DEFAULT_TENANT,
        "k3": "initech",
    }


def test_a_bad_entry_is_refused_without_echoing_the_key() -> None:
    with pytest.raises(InputError) as err:
        parse_keys("acme:ok\nbad tenant!:s3cret-value", source="keys.txt")
    assert "s3cret" not in str(err.value) and "entry 2" in str(err.value)


def test_a_key_resolves_to_its_tenant_and_is_never_in_the_repr(tmp_path: Path) -> None:
    f = tmp_path / "keys"
    f.write_text("acme:alpha-secret\nglobex:beta-secret\n")
    keys = ApiKeys.from_file(f)
    assert keys.tenant("alpha-secret") == "acme" and keys.tenant("beta-secret") == "globex"
    assert keys.tenant("nope") is None and keys.tenant(None) is None
    assert "secret" not in repr(keys) and "acme" in repr(keys)
    assert ApiKeys().tenant(None) == OPEN_TENANT


def test_the_query_key_counts_only_where_allowed() -> None:
    keys = ApiKeys({"k": "acme"})
    assert keys.presented({}, {"key": "k"}) is None
    assert keys.presented({}, {"key": "k"}, allow_query=True) == "k"
    assert keys.presented({"authorization": "Bearer k"}, {}) == "k"


def test_retention_and_the_owner_index(tmp_path: Path) -> None:
    meta = JobMeta("abc", "acme", "t", created_at=0.0)
    assert not expired(meta, now=1e9, ttl_s=10)  # not ended: kept
    ended = JobMeta("abc", "acme", "t", created_at=0.0, ended_at=100.0)
    assert not expired(ended, now=110.0, ttl_s=10) and expired(ended, now=110.5, ttl_s=10)
    index = JobIndex(tmp_path)
    index.record(meta)
    index.ended("abc", 5.0)
    again = JobIndex(tmp_path)  # another process sharing the workspace
    got = again.get("abc")
    assert got is not None and got.tenant == "acme" and got.ended_at == 5.0
    again.forget("abc")
    assert JobIndex(tmp_path).get("abc") is None
    with pytest.raises(ValueError):
        index.record(JobMeta("../x", "acme", "t", 0.0))
