"""The queue payload of a bug: its title, a failing test if given, and where its inputs are saved.

A submitted bug travels through the queue as JSON (workers may run on other
machines), with paths as strings; :class:`BugSpec` is that payload, built
by the API from the saved uploads and read back by the worker that runs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from fixbugs.inputs import BugInputs

__all__ = ["BugSpec"]


class BugSpec(BaseModel):
    """One bug to investigate: paths inside the job's directory (or a bundled example)."""

    model_config = ConfigDict(frozen=True)

    title: str
    report: Path
    repo: Path
    logs: tuple[Path, ...] = ()
    traces: tuple[Path, ...] = ()
    test: str | None = None
    # the run's index cache (inside the job's directory: it leaves with the job); None:
    # the user's cache, as a CLI run uses
    index_dir: Path | None = None

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> BugSpec:
        """The spec of a queue message's payload (JSON, as :meth:`payload` wrote it)."""
        return cls.model_validate(payload)

    def payload(self) -> dict[str, Any]:
        """The JSON the queue carries and ``spec.json`` holds: paths as strings."""
        return self.model_dump(mode="json")

    def load(self) -> BugInputs:
        """Read and check the bug's inputs (blocking: files are parsed)."""
        from fixbugs.inputs import load_inputs

        return load_inputs(
            self.report,
            self.repo,
            logs=list(self.logs),
            traces=list(self.traces),
            test=self.test,
        )

    async def load_isolated(self) -> BugInputs:
        """:meth:`load`, its parsing of the report, logs and traces in a process of its
        own that is killed at a deadline (:mod:`fixbugs.inputs.isolated`): a tenant's
        text cannot hold the service's event loop."""
        from fixbugs.inputs.isolated import load_inputs_isolated

        return await load_inputs_isolated(
            self.report, self.repo, list(self.logs), list(self.traces), self.test
        )
