"""The services one bug's run uses: models, options, clock, recorder, journal, files.

A stage is ``run_*(inputs, prior, ctx[, workspace]) -> result``
(:mod:`fixbugs.stages`): it reads the bug's inputs and the results of the
stages before it (the :class:`~fixbugs.run.record.BugRun` so far, or the
results it needs), uses these services, and returns its own typed result;
the driver composes the record from the results. The :class:`RunContext`
holds no result: only what serves the run (the models, the options, the
clock, the metrics recorder, the spend budget of its model calls, the
journal of events and notes, and the repository's index: its files read,
parsed and tokenized once per run, or read back from the index cache when
the tree was seen before). A stage that runs the repository's code takes
the workspace as its own argument, so it always has one.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentrt import Clock, SpendBudget, Trust
from agentrt.flow import SpendSnapshot
from agentrt.llm import ChatModel
from agentrt.metrics import MetricsRecorder
from fixbugs.pyenv.userenv import bytecode_env
from fixbugs.run.model_steps import JUDGE_STEPS, NO_STEPS, ModelStep, ModelSteps
from fixbugs.run.progress import Journal

if TYPE_CHECKING:
    from fixbugs.index import RepoIndex
    from fixbugs.inputs import Repository
    from fixbugs.pyenv.userenv import TestEnv
    from fixbugs.sandbox.executor import Executor
    from fixbugs.sandbox.limits import CommandResult

__all__ = ["BUDGET_REACHED", "AgentOptions", "Models", "RunContext"]


# the one line a run's notes and progress stream get when its spend budget is reached
BUDGET_REACHED = (
    "no model call whose worst case does not fit is started; the run goes on from the "
    "static evidence"
)


@dataclass(frozen=True, slots=True)
class Models:
    """Small model for routine map steps, large model for judgment.

    ``judge_trust`` is the trust of the endpoint behind the judge role
    (:meth:`agentrt.Settings.trust_for`): ``low`` keeps the guards written
    for a weak model (its root cause only breaks ties in the evidence, its
    rewrite stays inside the root cause); ``high`` lets a strong one
    overrule weaker evidence, grounding kept. Low unless the models come
    from a configuration that says otherwise.
    """

    map: ChatModel
    judge: ChatModel
    judge_trust: Trust = "low"
    map_trust: Trust = "low"  # likewise for the map role (its routine steps, model_steps)


@dataclass(frozen=True, slots=True)
class AgentOptions:
    test_env: Mapping[str, str] | None = None  # environment for test commands
    python: TestEnv | None = None  # the user's interpreter that runs their tests
    no_python: str | None = None  # why no interpreter was found (tests cannot run)
    test_timeout_s: float = 120.0
    # a project's module tests or whole suite, in validation (and their baselines)
    suite_timeout_s: float = 900.0
    relevance_top_n: int = 8
    max_log_chunks: int = 2
    max_candidates: int = 300  # repair candidates validated at most (--repair-candidates)
    fix_budget_s: float = 300.0  # seconds of repair validation (--repair-budget)
    # follow-ups built on a candidate that moved the failure forward (fixbugs.repair.followup)
    stepwise: bool = True
    repair_regions: int = 4  # suspicious regions the repair engine edits
    repair_alternatives: int = 0  # validated fixes collected beyond the first, budget allowing
    repair_bench: bool = False  # validate the same candidates sequentially, then in parallel
    # validate the same candidates on the tests alone, then with the verdict's checks
    checks_bench: bool = False
    validation_slots: int | None = None  # candidates validated at once (None: one per core)
    use_sbfl: bool = True
    use_model: bool = True
    model_steps: ModelSteps | None = None  # None: the steps the endpoints' trust allows
    slack_lines: int = 3  # how far outside the localized lines a fix may reach
    max_cost_usd: float | None = None  # the run's model spend, in dollars (--max-cost)
    max_model_tokens: int | None = None  # and in tokens, input + output (--max-tokens)
    # which model serves which role, or that none does (fixbugs.run.preflight.models_line)
    models_line: str | None = None
    # the index cache's folder; None: the user's (~/.cache/fixbugs/index). The service
    # gives each job its own, inside the job's directory, so it leaves with the job
    index_dir: Path | None = None

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

    def __init__(self, repo: Repository, index_dir: Path | None) -> None:
        self.repo = repo
        self.index_dir = index_dir
        self.index: RepoIndex | None = None
        self._lock = threading.Lock()

    def get(self) -> RepoIndex:
        with self._lock:
            if self.index is None:
                from fixbugs.index import IndexCache, index_repository

                cache = IndexCache(self.index_dir) if self.index_dir else IndexCache.default()
                self.index = index_repository(self.repo, cache=cache)
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
    # the run's model spend: every call of its models is admitted and charged here
    spend: SpendBudget = field(default_factory=SpendBudget, repr=False, compare=False)

    @classmethod
    def create(
        cls,
        repo: Repository,
        *,
        models: Models | None,
        options: AgentOptions,
        journal: Journal,
        recorder: MetricsRecorder | None = None,
        spent: SpendSnapshot | None = None,
    ) -> RunContext:
        """Services for a run over ``repo`` on the journal's clock (a new recorder if none).

        The spend budget has the options' limits, and goes on from ``spent``
        (what the run's earlier stages spent, when they ran elsewhere);
        reaching it puts one line in the run's notes and progress stream.
        """
        clock = journal.clock
        spend = SpendBudget(
            max_cost_usd=options.max_cost_usd,
            max_tokens=options.max_model_tokens,
            on_reached=lambda line: journal.note("budget", f"{line}: {BUDGET_REACHED}"),
            spent=spent,
        )
        return cls(
            models,
            options,
            clock,
            recorder or MetricsRecorder(clock),
            journal,
            _Files(repo, options.index_dir),
            spend,
        )

    def step_model(self, step: ModelStep) -> ChatModel | None:
        """The model that serves ``step``, or None when the run does not take it.

        The one test every model step makes (see :mod:`fixbugs.run.model_steps`):
        no models, ``--no-model``, or a step not among the run's steps.
        """
        if self.models is None or not self.model_steps().on(step):
            return None
        return self.models.judge if step in JUDGE_STEPS else self.models.map

    def model_steps(self) -> ModelSteps:
        """The run's model steps: ``--model-steps``, else those the endpoints' trust allows."""
        if self.models is None or not self.options.use_model:
            return NO_STEPS
        if self.options.model_steps is not None:
            return self.options.model_steps
        return ModelSteps.by_trust(self.models.map_trust, self.models.judge_trust)

    def step_deadline_s(self, step: ModelStep) -> float:
        """How long ``step`` may take here: short on a low-trust endpoint, minutes on a high."""
        trust: Trust = "low"
        if self.models is not None:
            trust = self.models.judge_trust if step in JUDGE_STEPS else self.models.map_trust
        return ModelSteps.deadline_s(step, trust)

    def files(self) -> RepoIndex:
        """The repository's index, a mapping of its text files (path -> text), built once
        per run; every static signal reads it instead of the tree."""
        return self._files.get()

    async def run_in(
        self, executor: Executor, cmd: str, what: str, *, write_bytecode: bool = False
    ) -> CommandResult:
        """Run a test command through ``executor`` as a recorded tool call of the current stage.

        Test commands never write bytecode (:func:`~fixbugs.pyenv.userenv.bytecode_env`);
        ``write_bytecode`` lets this one command write it, in ``executor``'s
        own copy, for :meth:`~fixbugs.sandbox.executor.Workspace.keep_bytecode`.
        """
        env = self.options.test_env
        if write_bytecode:
            env = {**(env or {}), **bytecode_env(write=True)}
        with self.recorder.tool_call(what):
            result = await executor.run(cmd, timeout_s=self.options.test_timeout_s, env=env)
        # a sandbox limit is said in the run's notes (and so its JSON), once per command kind
        for line in result.notes:
            if line.startswith("limit hit") and f"{what}: {line}" not in self.journal.notes:
                self.journal.note("sandbox", f"{what}: {line}")
        return result
