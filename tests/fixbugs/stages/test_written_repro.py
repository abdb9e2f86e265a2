"""The judge's reproduction script: written from the issue, kept only when it fails as shown.

The synthetic project crashes in ``shout`` when ``greet`` gets a user with
no name; the report pastes only the traceback (no code that runs, no test),
and the project's one test passes. A trusted judge's script that raises the
traceback's exception is the reproduction (origin ``written``); a script that
fails another way is not, and on a low-trust judge the step is never asked.
"""

from __future__ import annotations

import functools
import textwrap
from dataclasses import replace
from pathlib import Path

from userpython import user_python

from agentrt import Trust
from agentrt.llm import FakeModel
from agentrt.pipeline import PipelineRunner
from agentrt.queues import EpochClock, open_queue
from agentrt.sim import ResponderInput
from agentrt.tokens import LatencyModel
from fixbugs.inputs import load_inputs
from fixbugs.inputs.snippets import written_snippet
from fixbugs.pyenv.userenv import Interpreter
from fixbugs.queued import QUEUE_STAGES, BugSpec, StagedAgent, StagedConfig
from fixbugs.queued.pipeline import NO_SCRIPT_STAGED
from fixbugs.run.agent import env_for_interpreter, run_bug
from fixbugs.run.context import AgentOptions, Models
from fixbugs.run.model_steps import ModelSteps
from fixbugs.run.record import Reproduction
from fixbugs.run.report import RunReport
from fixbugs.sandbox.testing import PlainWorkspace
from fixbugs.stages.lead import oracle_check
from fixbugs.stages.written_repro import REPRO_SYSTEM, script_of

PY = env_for_interpreter(Interpreter(user_python(), "--python"))

TEXTUTIL = textwrap.dedent(
    """\
    def shout(name):
        return name.upper() + "!"


    def greet(user):
        return "Hello " + shout(user.get("name"))
    """
)
REPORT = textwrap.dedent(
    """\
    # greet crashes for a user without a name

    Our sign-up page calls greet for every new user. Since the upgrade it crashes:

    ```
    Traceback (most recent call last):
      File "/srv/app/views.py", line 41, in signup
        banner = greet(user)
      File "/srv/venv/lib/python3.11/site-packages/textutil.py", line 6, in greet
        return "Hello " + shout(user.get("name"))
      File "/srv/venv/lib/python3.11/site-packages/textutil.py", line 2, in shout
        return name.upper() + "!"
    AttributeError: 'NoneType' object has no attribute 'upper'
    ```
    """
)
RIGHT = "```python\nfrom textutil import greet\n\nprint(greet({}))\n```\n"
# fails, but not as the issue shows: its own mistake, not the bug
WRONG = "```python\nfrom textutil import greet\n\ngreet(None)\n```\n"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    (repo / "tests").mkdir(parents=True)
    (repo / "textutil.py").write_text(TEXTUTIL)
    (repo / "tests" / "test_textutil.py").write_text(
        "from textutil import shout\n\n\ndef test_shout():\n    assert shout('a') == 'A!'\n"
    )
    (repo / "report.md").write_text(REPORT)
    return repo


def _judge(script: str) -> tuple[FakeModel, list[str]]:
    """A model that answers the reproduction request with ``script``; the systems it saw."""
    systems: list[str] = []

    def respond(req: ResponderInput) -> str:
        system = next((c for r, c in req.messages if r == "system"), "")
        systems.append(system)
        return script if system == REPRO_SYSTEM else "no"

    return FakeModel(responder=respond, latency=LatencyModel(0.0, 0.0, 1e9)), systems


async def _run(
    tmp_path: Path, model: FakeModel, trust: Trust, steps: ModelSteps | None
) -> RunReport:
    repo = _repo(tmp_path)
    report: RunReport = await run_bug(
        load_inputs(repo / "report.md", repo),
        models=Models(map=model, judge=model, judge_trust=trust),
        options=replace(AgentOptions.for_env(PY), model_steps=steps),
        workspace=functools.partial(PlainWorkspace.create),
        until="root_cause",
    )
    return report


async def test_a_script_that_fails_as_the_issue_shows_is_the_reproduction(
    tmp_path: Path,
) -> None:
    model, systems = _judge(RIGHT)
    report = await _run(tmp_path, model, "high", ModelSteps(frozenset({"reproduce"})))
    d = report.to_dict()
    rep = d["reproduction"]
    assert REPRO_SYSTEM in systems
    assert rep["status"] == "confirmed" and rep["origin"] == "written", rep
    assert rep["summary"].startswith("the model's script fails as reported"), rep
    assert "raises AttributeError" in rep["summary"]
    assert "print(greet({}))" in rep["script"]
    # its crash is evidence: the raising line of the repository's file
    assert d["root_cause"]["path"] == "textutil.py"
    assert "the model's script" in report.markdown()


async def test_a_script_that_fails_another_way_is_not_kept(tmp_path: Path) -> None:
    model, _ = _judge(WRONG)
    report = await _run(tmp_path, model, "high", ModelSteps(frozenset({"reproduce"})))
    d = report.to_dict()
    assert d["reproduction"]["status"] == "none" and not d["reproduction"]["confirmed"]
    assert any("the model's script" in n and "not the reported message" in n for n in d["notes"]), (
        d["notes"]
    )


async def test_a_low_trust_judge_is_not_asked_for_a_script(tmp_path: Path) -> None:
    model, systems = _judge(RIGHT)
    report = await _run(tmp_path, model, "low", None)
    assert REPRO_SYSTEM not in systems
    assert report.to_dict()["reproduction"]["status"] == "none"


def test_the_script_is_the_first_python_block_that_parses() -> None:
    answer = "Here:\n```python\ndef broken(:\n```\n```py\nimport textutil\n```\n"
    assert script_of(answer) == "import textutil\n"
    assert script_of("I cannot reproduce this without more details.") is None
    assert script_of("```bash\npip install textutil\n```") is None


def test_the_script_is_held_to_the_issue_not_to_itself() -> None:
    s = written_snippet("raise KeyError('x')\n", REPORT)
    assert (s.kind, s.raises) == ("written", "AttributeError")
    assert s.message == "'NoneType' object has no attribute 'upper'"
    prose = written_snippet("assert False\n", "# wrong total\n\nIt should return `42`.")
    assert prose.raises is None and prose.expected == "42"


def test_a_written_reproduction_without_an_expected_result_is_a_weak_oracle() -> None:
    rep = Reproduction("python -c 1", "written", "confirmed", "s", script="x\n")
    check = oracle_check(rep)
    assert check is not None and check.kind == "weak_oracle"
    assert "a script the model wrote" in check.why
    assert oracle_check(replace(rep, expected="42")) is None


async def test_the_staged_service_does_not_hold_a_core_for_the_script(tmp_path: Path) -> None:
    """Its reproduction stage holds a sandbox core: no model wait there, and the run says so."""
    model, systems = _judge(RIGHT)
    repo = _repo(tmp_path)
    q = open_queue(f"sqlite:///{tmp_path / 'q.db'}", clock=EpochClock())

    async def opts() -> AgentOptions:
        return replace(AgentOptions.for_env(PY), model_steps=ModelSteps(frozenset({"reproduce"})))

    agent = StagedAgent(
        Models(map=model, judge=model, judge_trust="high"),
        opts,
        clock=q.clock,
        publish=lambda job, ev: None,
        config=StagedConfig(sandbox_slots=1),
        workspace=PlainWorkspace.create,
    )
    runner = PipelineRunner(agent.pipeline(), q, poll_s=0.05)
    try:
        spec = BugSpec(title="greet", report=repo / "report.md", repo=repo).payload()
        await runner.submit("bug", "bug", spec)
        await runner.run(until_idle=True)
        d = (await q.results("bug", list(QUEUE_STAGES)))["repair"]["report"]
    finally:
        await q.aclose()
    assert REPRO_SYSTEM not in systems
    assert d["reproduction"]["status"] == "none"
    assert NO_SCRIPT_STAGED in " ".join(d["notes"]), d["notes"]
