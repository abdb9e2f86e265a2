"""The services one bug's run uses: models, options, clock, recorder, journal, files.

A stage is ``run_*(inputs, prior, ctx[, workspace]) -> result``
(:mod:`fixbugs.stages`): it reads the bug's inputs and the results of the
stages before it (the :class:`~fixbugs.run.record.BugRun` so far, or the
results it needs), uses these services, and returns its own typed result;
the driver composes the record from the results. The :class:`RunContext`
holds no result: only what serves the run (the models, the options, the
clock, the metrics recorder, the journal of events and notes, and the
repository's index: its files read, parsed and tokenized once per run, or
read back from the index cache when the tree was seen before). A stage
that runs the repository's code takes the workspace as its own argument,
so it always has one.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentrt import Clock
from agentrt.llm import ChatModel
from agentrt.metrics import MetricsRecorder
from fixbugs.run.progress import Journal

if TYPE_CHECKING:
    from fixbugs.index import RepoIndex
    from fixbugs.inputs import Repository
    from fixbugs.pyenv.userenv import TestEnv
    from fixbugs.sandbox.executor import Executor
    from fixbugs.sandbox.limits import CommandResult

__all__ = ["AgentOptions", "Models", "RunContext"]


@dataclass(frozen=True, slots=True)
class Models:
    """Small model for routine map steps, large model for judgment."""

    map: ChatModel
    judge: ChatModel


@dataclass(frozen=True, slots=True)
class AgentOptions:
    test_env: Mapping[str, str] | None = None  # environment for test commands
    python: TestEnv | None = None  # the user's interpreter that runs their tests
    no_python: str | None = None  # why no interpreter was found (tests cannot run)
    test_timeout_s: float = 120.0
    relevance_top_n: int = 8
    max_log_chunks: int = 2
    max_candidates: int = 300  # repair candidates validated at most (--repair-candidates)
    fix_budget_s: float = 300.0  # seconds of repair validation (--repair-budget)
    repair_regions: int = 4  # suspicious regions the repair engine edits
    repair_alternatives: int = 0  # validated fixes collected beyond the first, budget allowing
    repair_bench: bool = False  # validate the same candidates sequentially, then in parallel
    validation_slots: int | None = None  # candidates validated at once (None: one per core)
    use_sbfl: bool = True
    use_model: bool = True
    slack_lines: int = 3  # how far outside the localized lines a fix may reach

    @classmethod
    def for_env(cls, env: TestEnv) -> AgentOptions:
        """Options whose tests run in ``env``: its interpreter and its command environment.

        The one way to pair them, so no caller gives a ``python`` with another
        interpreter's ``test_env``; other settings follow with ``replace``.
        """
        return cls(test_env=env.command_env(), python=env)


class _Files:
    """A repository's index, built (or read from the cache) on first use: the run's one
    read of the tree. Stages may ask from threads; the first builds, the others wait."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        self.index: RepoIndex | None = None
        self._lock = threading.Lock()

    def get(self) -> RepoIndex:
        with self._lock:
            if self.index is None:
                from fixbugs.index import IndexCache, index_repository

                self.index = index_repository(self.repo, cache=IndexCache.default())
            return self.index


@dataclass(frozen=True, slots=True)
class RunContext:
    """The services of one bug's run; it holds no stage's result (see the module's doc)."""

    models: Models | None
    options: AgentOptions
    clock: Clock
    recorder: MetricsRecorder
    journal: Journal
    _files: _Files = field(repr=False, compare=False)

    @classmethod
    def create(
        cls,
        repo: Repository,
        *,
        models: Models | None,
        options: AgentOptions,
        journal: Journal,
        recorder: MetricsRecorder | None = None,
    ) -> RunContext:
        """Services for a run over ``repo`` on the journal's clock (a new recorder if none)."""
        clock = journal.clock
        return cls(
            models, options, clock, recorder or MetricsRecorder(clock), journal, _Files(repo)
        )

    def files(self) -> RepoIndex:
        """The repository's index, a mapping of its text files (path -> text), built once
        per run; every static signal reads it instead of the tree."""
        return self._files.get()

    async def run_in(self, executor: Executor, cmd: str, what: str) -> CommandResult:
        """Run a test command through ``executor`` as a recorded tool call of the current stage."""
        with self.recorder.tool_call(what):
            result = await executor.run(
                cmd, timeout_s=self.options.test_timeout_s, env=self.options.test_env
            )
        # a sandbox limit is said in the run's notes (and so its JSON), once per command kind
        for line in result.notes:
            if line.startswith("limit hit") and f"{what}: {line}" not in self.journal.notes:
                self.journal.note("sandbox", f"{what}: {line}")
        return result
