"""``fixbugs eval --as-user``: each case run the way a user runs FixBugs.

For each case the tree is extracted fresh (by :func:`fixbugs.eval.run.run_eval`),
then ``fixbugs run --report … --repo … --test "python -m pytest …" --json …``
runs as a separate process whose environment is what a user's shell would
hold with the case's virtualenv activated: ``VIRTUAL_ENV`` and ``PATH`` (plus
``HOME`` and the locale), nothing else from the eval. FixBugs must then find
the user's interpreter by itself.

"Named failing test truly confirmed" is stricter than the run's own claim:
the run must say *confirmed*, must have used the case's interpreter, and an
independent ``pytest -v`` of the case's failing tests under that interpreter,
in a sandbox of the case's tree, must show each of them failing or erroring.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from fixbugs.eval.case import AgentOutput, AgentRunner, Case
from fixbugs.eval.full_agent import output_from_report
from fixbugs.eval.reproduction import repository_modules, reproduction_kind
from fixbugs.pyenv.testid import TestId
from fixbugs.pyenv.testoutput import parse_outcomes
from fixbugs.run.model_steps import ModelSteps
from fixbugs.run.report_schema import ReportModel
from fixbugs.sandbox import Sandbox, WorkspaceFactory, interpreter_paths
from fixbugs.sandbox.hosttools import run_tool

__all__ = ["as_user_agent", "user_shell_env"]


def user_shell_env(venv: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """A shell's environment with ``venv`` activated: ``VIRTUAL_ENV``, ``PATH``, little else."""
    src = os.environ if base is None else base
    own_bin = str(Path(sys.prefix) / "bin")
    rest = [p for p in src.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p and p != own_bin]
    env = {k: v for k, v in src.items() if k in ("HOME", "LANG", "LC_ALL", "TERM", "USER")}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *rest])
    return env


def _fixbugs_exe() -> list[str]:
    script = Path(sys.executable).parent / "fixbugs"
    return [str(script)] if script.exists() else [sys.executable, "-m", "fixbugs.cli"]


def _failing_tests(case: Case) -> list[str]:
    meta = json.loads((case.dir / "case.json").read_text())
    return list(meta.get("failing_tests", []))


async def _independent_check(
    tree: Path,
    python: Path,
    tests: list[str],
    env: Mapping[str, str],
    workspace: WorkspaceFactory,
) -> bool:
    """Each named failing test shows FAILED or ERROR under the case's interpreter.

    The tests run in ``workspace``'s copy of ``tree`` (the sandbox), with the
    activated venv's ``PATH`` and ``VIRTUAL_ENV``; never on the host.
    """
    if not tests:
        return False
    readonly = interpreter_paths(python)
    ws = await asyncio.to_thread(lambda: workspace(tree, readonly_paths=readonly))
    try:
        run = await ws.run(
            [str(python), "-m", "pytest", "-v", "-p", "no:cacheprovider", *tests],
            timeout_s=600,
            env={
                **{k: v for k, v in env.items() if k in ("PATH", "VIRTUAL_ENV")},
                "PYTHONDONTWRITEBYTECODE": "1",
            },
        )
    finally:
        await asyncio.to_thread(ws.close)
    outcomes = parse_outcomes(run.stdout + run.stderr)
    return all(_shows_failing(t, outcomes) for t in tests)


def _shows_failing(test: str, outcomes: Mapping[str, str]) -> bool:
    """``test`` (or one of its parametrized ids, ``test[...]``, or of a class's tests,
    ``Class::test_x``) failed or errored."""
    wanted = TestId.parse(test)
    return any(
        o in ("failed", "error") and TestId.parse(i).within(wanted) for i, o in outcomes.items()
    )


def as_user_agent(
    *,
    use_model: bool,
    config: Path | None = None,
    repair_budget_s: float | None = None,
    model_steps: ModelSteps | None = None,
    max_cost_usd: float | None = None,
    max_model_tokens: int | None = None,
    timeout_s: float = 1800.0,
    workspace: WorkspaceFactory = Sandbox.create,
    model_env: Mapping[str, str] | None = None,
) -> AgentRunner:
    """A runner that runs ``fixbugs run`` as a subprocess with the case's venv activated.

    ``fixbugs run`` is FixBugs itself, a host tool
    (:func:`fixbugs.sandbox.hosttools.run_tool`); the check of the failing
    tests runs the case's code, so in ``workspace`` (the sandbox).
    ``model_env`` (``AGENTRT_BASE_URL``, ``AGENTRT_MODEL``) points the run's
    models at an endpoint, as a user's shell would; nothing else is added.
    """
    # the run's cwd is its own temp folder: every path it gets is absolute
    config_arg = ["--config", os.path.abspath(config)] if config is not None else []

    def report_of(case: Case) -> str:
        return os.path.abspath(case.report_file or case.dir / "report.md")

    async def run(case: Case, tree: Path, python_bin: Path) -> AgentOutput:
        venv = python_bin.parent
        env = user_shell_env(venv) | dict(model_env or {})
        with tempfile.TemporaryDirectory(prefix=f"fixbugs-asuser-{case.id}-") as tmp:
            out_json = Path(tmp) / "report.json"
            argv = [
                *_fixbugs_exe(),
                "run",
                "--report",
                report_of(case),
                "--repo",
                str(tree),
                "--json",
                str(out_json),
            ]
            if case.test_command:  # --no-test: the user gives none
                argv += ["--test", case.test_command]
            if repair_budget_s is not None:
                argv += ["--repair-budget", f"{repair_budget_s:g}"]
            if max_cost_usd is not None:
                argv += ["--max-cost", repr(max_cost_usd)]
            if max_model_tokens is not None:
                argv += ["--max-tokens", str(max_model_tokens)]
            if not use_model:
                argv.append("--no-model")
            elif model_steps is not None:
                argv += ["--model-steps", model_steps.spec()]
            argv += config_arg
            proc = await asyncio.to_thread(
                lambda: run_tool(argv, env=env, cwd=tmp, timeout_s=timeout_s)
            )
            if not out_json.exists():
                printed = proc.stderr_text or proc.stdout_text
                last = printed.strip().splitlines()[-1:] or ["no output"]
                return AgentOutput((), notes=(f"fixbugs run exited {proc.returncode}: {last[0]}",))
            report = ReportModel.model_validate_json(out_json.read_text())
        out = output_from_report(report)
        used = report.environment.python if report.environment else ""
        same_env = Path(used).parent == python_bin
        said = report.reproduction.status == "confirmed"
        truly = (
            said
            and same_env
            and await _independent_check(
                tree, python_bin / "python", _failing_tests(case), env, workspace
            )
        )
        kind = reproduction_kind(
            report.reproduction.status, report.reproduction.output_tail, repository_modules(tree)
        )
        if case.test_command:  # the named failing tests decide, run independently
            kind = "genuine" if truly else ("none" if kind == "genuine" else kind)
        elif kind == "genuine" and not same_env:  # from the issue alone: the run's own test
            kind = "none"
        note = (
            f"as user: exit {proc.returncode}; interpreter {used or '-'} "
            f"({'the case venv' if same_env else 'NOT the case venv'}); "
            f"reproduction {report.reproduction.status}; truly confirmed {truly}"
        )
        return replace(
            out, reproduction_confirmed=truly, reproduction_kind=kind, notes=(*out.notes, note)
        )

    return run
