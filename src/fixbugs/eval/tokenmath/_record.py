"""Record: the whole agent on a case against the oracle, each model call it makes kept as sent."""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentrt.llm import ChatModel, ChatRequest, ChatResult, Completed, StreamEvent
from agentrt.metrics import current_stage

if TYPE_CHECKING:  # the simulator (starlette) is imported when the bench runs, not with the CLI
    pass


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One model call as the agent made it: the request, the answer, when (run seconds)."""

    request: ChatRequest
    answer: str
    stage: str
    started_at: float
    ended_at: float
    streamed: bool
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class CaseRecording:
    """A whole run's model calls and its wall (real seconds), from the recording run, and
    the whole bug as one text (the report, then every Python file of the repository)."""

    case_id: str
    wall_s: float
    calls: tuple[RecordedCall, ...]
    validated: bool
    bug_text: str = ""


def whole_bug_text(report: str, files: Mapping[str, str]) -> str:
    """The report, then each of ``files`` (path → text, in order) under a ``# file:`` line:
    what an agent that narrows nothing puts in its one call."""
    return "\n\n".join([report, *(f"# file: {rel}\n{text}" for rel, text in files.items())])


class RecordingModel:
    """A :class:`~agentrt.llm.ChatModel` that passes calls through and records each one.

    Wrapped outermost around a role's client, it sees each call as the stage
    made it (retries inside count once) and notes the request itself, so the
    replay sends exactly what the agent sent.
    """

    def __init__(
        self, inner: ChatModel, calls: list[RecordedCall], now: Callable[[], float]
    ) -> None:
        self.inner = inner
        self.model = inner.model
        self.name = inner.name
        self.clock = inner.clock
        self._calls = calls
        self._now = now

    def _note(self, req: ChatRequest, res: ChatResult, t0: float, streamed: bool) -> None:
        self._calls.append(
            RecordedCall(
                req,
                res.text,
                req.stage or current_stage(),
                t0,
                self._now(),
                streamed,
                res.usage.input_tokens,
                res.usage.output_tokens,
            )
        )

    async def complete(self, request: ChatRequest) -> ChatResult:
        t0 = self._now()
        res = await self.inner.complete(request)
        self._note(request, res, t0, streamed=False)
        return res

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        t0 = self._now()
        async for ev in self.inner.stream(request):
            if isinstance(ev, Completed):
                self._note(request, ev.result, t0, streamed=True)
            yield ev

    async def aclose(self) -> None:
        await self.inner.aclose()


async def record_case(case_dir: Path) -> CaseRecording:
    """Run the whole agent on one case against its oracle, recording every model call."""
    from agentrt.sim import serving_in_thread
    from fixbugs.eval.archive import extract_tree
    from fixbugs.eval.gold_edits import load_gold_fix
    from fixbugs.eval.oracle import ORACLE_MODEL, OracleAnswers, oracle_app
    from fixbugs.eval.run import load_cases, read_tree
    from fixbugs.inputs import load_inputs
    from fixbugs.pyenv.testenv import ensure_python_env
    from fixbugs.pyenv.userenv import Interpreter
    from fixbugs.run.agent import close_models, env_for_interpreter, models_from_config, run_bug
    from fixbugs.run.context import AgentOptions, Models

    [case] = load_cases(case_dir.parent, case_id=case_dir.name)
    python_bin = await asyncio.to_thread(ensure_python_env, case.python, case.requirements)
    calls: list[RecordedCall] = []
    with tempfile.TemporaryDirectory(prefix=f"fixbugs-tokenmath-{case.id}-") as tmp:
        tree = Path(tmp) / "repo"
        tree.mkdir()
        extract_tree(case.dir / case.archive, tree)
        fix = load_gold_fix(case.dir)
        texts = read_tree(tree)
        decoys = sorted(p for p in texts if p.endswith(".py"))
        report_md = (case.dir / "report.md").read_text(errors="replace")
        bug_text = whole_bug_text(report_md, {p: texts[p] for p in decoys})
        answers = OracleAnswers(fix, case.id, decoys=decoys)
        with serving_in_thread(oracle_app(answers.right)) as url:
            built = models_from_config(
                None, {"AGENTRT_BASE_URL": url, "AGENTRT_MODEL": ORACLE_MODEL}
            )
            t0 = time.monotonic()

            def now() -> float:
                return time.monotonic() - t0

            models = Models(
                map=RecordingModel(built.map, calls, now),
                judge=RecordingModel(built.judge, calls, now),
                judge_trust=built.judge_trust,
                map_trust=built.map_trust,
            )
            try:
                inputs = load_inputs(case.dir / "report.md", tree, test=case.test_command or None)
                env = env_for_interpreter(Interpreter(python_bin / "python", "case env"))
                options = replace(AgentOptions.for_env(env), test_timeout_s=300)
                t0 = time.monotonic()
                report = await run_bug(inputs, models=models, options=options)
                wall = time.monotonic() - t0
            finally:
                await close_models(built)
    return CaseRecording(case.id, round(wall, 2), tuple(calls), report.model.validated, bug_text)
