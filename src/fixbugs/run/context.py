"""What one bug's run knows, stage by stage.

Each stage reads what earlier stages produced and adds its own frozen
result; the :class:`RunContext` is the one mutable holder, owned by the
driver (:func:`fixbugs.run.agent.run_bug`, a graph of stage nodes). Stages never
reach around it. The CLI, ``fixbugs eval`` and the service's investigations
all call the same ``run_bug``, so a stage behaves the same everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from agentrt import Clock
from agentrt.llm import ChatModel
from agentrt.metrics import MetricsRecorder
from fixbugs.repair.ranking import RepairCandidate
from fixbugs.run.progress import EventKind, EventSink, ProgressEvent

if TYPE_CHECKING:
    from fixbugs.inputs import BugInputs
    from fixbugs.localize.rank import RankedFile
    from fixbugs.localize.regions import Region
    from fixbugs.localize.traceback import ParsedFailure
    from fixbugs.pyenv.userenv import TestEnv
    from fixbugs.sandbox.executor import Executor, Workspace
    from fixbugs.sandbox.limits import CommandResult

__all__ = [
    "AgentOptions",
    "Evidence",
    "Models",
    "Reproduction",
    "RootCause",
    "RunContext",
    "Validation",
]


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


@dataclass(frozen=True, slots=True)
class Evidence:
    """One piece of evidence with its provenance."""

    source: Literal["report", "traceback", "log", "trace", "test", "model"]
    text: str
    path: str | None = None
    line: int | None = None
    at: str | None = None  # timestamp or span id, when known


ReproStatus = Literal["confirmed", "passes", "could_not_run", "none"]


@dataclass(frozen=True, slots=True)
class Reproduction:
    """Whether the bug was seen to fail: one ``status``.

    ``confirmed`` only when the named tests were collected, ran, and failed
    or errored in the test itself (:func:`fixbugs.pyenv.testverdict.classify_run`);
    "could not run" (collection or import errors, usage errors, no tests,
    no interpreter or no pytest) is never a reproduction.
    """

    command: str | None
    origin: Literal["given", "report", "written", "discovered", "none"]
    status: ReproStatus
    summary: str
    baseline: Mapping[str, str] = field(default_factory=dict)  # test id -> outcome
    verbose_command: str | None = None
    output_tail: str = ""
    suite_command: str | None = None  # the whole test folder, for the last gate

    @property
    def confirmed(self) -> bool:
        """The named tests ran and failed on the current code."""
        return self.status == "confirmed"


@dataclass(frozen=True, slots=True)
class RootCause:
    path: str
    start: int
    end: int
    explanation: str
    origin: Literal["model", "sbfl", "static"]
    evidence: tuple[str, ...] = ()
    function: str | None = None  # the enclosing function, None for module-level code

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "function": self.function,
            "lines": [self.start, self.end],
            "explanation": self.explanation,
            "origin": self.origin,
            "evidence": list(self.evidence),
        }


@dataclass(frozen=True, slots=True)
class Validation:
    validated: bool
    candidate: RepairCandidate | None  # the validated fix
    tried: int
    summary: str
    rejected: tuple[str, ...] = ()


class RunContext:
    """The mutable state of one run; stages add their results here."""

    def __init__(
        self,
        inputs: BugInputs,
        *,
        models: Models | None,
        options: AgentOptions,
        clock: Clock,
        recorder: MetricsRecorder,
        sink: EventSink,
    ) -> None:
        self.inputs = inputs
        self.models = models
        self.options = options
        self.clock = clock
        self.recorder = recorder
        self._sink = sink
        self.started = clock.now()
        self.events: list[ProgressEvent] = []
        self.evidence: list[Evidence] = []
        self.log_digest: str = ""  # reduced log evidence, rendered for prompts
        self.failure: ParsedFailure | None = None  # parsed traceback / failing tests
        self.static_ranking: list[RankedFile] = []
        self.ranked: list[RankedFile] = []
        self.first_hypothesis_s: float | None = None
        self.reproduction: Reproduction | None = None
        self.suspicious: dict[str, list[tuple[int, int, float]]] = {}  # path -> SBFL ranges
        self.root_cause: RootCause | None = None
        self.regions: list[Region] = []  # top suspicious regions (fixbugs.localize.regions)
        self.candidates: list[RepairCandidate] = []  # the fix stage's, ranked best first
        self.validation: Validation | None = None
        # JSON edge: fixbugs.stages.validate.repair_summary, as the report prints it
        self.repair_run: dict[str, Any] | None = None
        self.sandbox: Workspace = None  # type: ignore[assignment]  # set by the driver
        self.suite_baseline: dict[str, str] | None = None  # filled on first use
        self.notes: list[str] = []
        self._files: dict[str, str] | None = None

    def files(self) -> dict[str, str]:
        """The repository's text files (path -> text), read once per run."""
        if self._files is None:
            repo = self.inputs.repo
            self._files = {p: repo.read(p) for p in repo.files()}
        return self._files

    def elapsed(self) -> float:
        return self.clock.now() - self.started

    def emit(self, kind: EventKind, stage: str, message: str, **data: Any) -> None:
        ev = ProgressEvent(kind, stage, round(self.elapsed(), 3), message, data)
        self.events.append(ev)
        self._sink(ev)

    async def run_in(self, executor: Executor, cmd: str, what: str) -> CommandResult:
        """Run a test command through ``executor`` as a recorded tool call of the current stage."""
        with self.recorder.tool_call(what):
            result = await executor.run(
                cmd, timeout_s=self.options.test_timeout_s, env=self.options.test_env
            )
        # a sandbox limit is said in the run's notes (and so its JSON), once per command kind
        for line in result.notes:
            if line.startswith("limit hit") and f"{what}: {line}" not in self.notes:
                self.note("sandbox", f"{what}: {line}")
        return result

    def note(self, stage: str, message: str) -> None:
        self.notes.append(message)
        self.emit("note", stage, message)
