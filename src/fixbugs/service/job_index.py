"""Who owns each job, and how long its report is kept.

A job's inputs (the uploaded repository, report, logs) are deleted when
it ends, but whose job it was must outlive them: every read of a status,
report or event stream asks :class:`JobIndex` first, and a job of another
tenant is answered exactly like a job that does not exist. One small JSON
file per job under ``<workspace>/meta/``, written atomically, so processes
sharing the workspace (workers elsewhere) agree. :func:`expired` is the
pure retention rule.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path

__all__ = ["JobIndex", "JobMeta", "expired"]


@dataclass(frozen=True, slots=True)
class JobMeta:
    job: str
    tenant: str
    title: str
    created_at: float
    ended_at: float | None = None


def expired(meta: JobMeta, now: float, ttl_s: float) -> bool:
    """A job ended more than ``ttl_s`` ago: its report is no longer served."""
    return meta.ended_at is not None and now - meta.ended_at > ttl_s


class JobIndex:
    """``job -> JobMeta``, on disk with an in-process cache."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "meta"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._cache: dict[str, JobMeta] = {}

    def _path(self, job: str) -> Path:
        if not job.isalnum():
            raise ValueError(f"job id {job!r} is not alphanumeric")
        return self.dir / f"{job}.json"

    def record(self, meta: JobMeta) -> None:
        path = self._path(meta.job)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(meta)))
        os.replace(tmp, path)
        self._cache[meta.job] = meta

    def get(self, job: str) -> JobMeta | None:
        if job in self._cache:
            return self._cache[job]
        try:
            data = json.loads(self._path(job).read_text())
            meta = JobMeta(**data)
        except (OSError, ValueError, TypeError):
            return None
        self._cache[job] = meta
        return meta

    def ended(self, job: str, at: float) -> None:
        meta = self.get(job)
        if meta is not None and meta.ended_at is None:
            self.record(replace(meta, ended_at=at))

    def all(self) -> list[JobMeta]:
        out = []
        for entry in self.dir.glob("*.json"):
            meta = self.get(entry.stem)
            if meta is not None:
                out.append(meta)
        return out

    def forget(self, job: str) -> None:
        self._cache.pop(job, None)
        with contextlib.suppress(OSError, ValueError):
            self._path(job).unlink()
