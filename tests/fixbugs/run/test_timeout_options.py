"""``fixbugs run --test-timeout/--suite-timeout``: a project whose suite takes longer than
the defaults (120 s a test command, 900 s a suite shard) can say so, and the limits
reach the options every stage reads."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner
from userpython import user_python

from fixbugs.examples import example_dir
from fixbugs.run.context import AgentOptions


async def test_the_limits_reach_the_agent_options(monkeypatch: pytest.MonkeyPatch) -> None:
    from fixbugs.run import agent

    seen: list[AgentOptions] = []

    async def fake_run_bug(inputs: object, *, models: object, options: AgentOptions, sink: object):
        seen.append(options)
        return "report"

    monkeypatch.setattr(agent, "run_bug", fake_run_bug)
    base = example_dir("invoice")
    common = {"report": base / "report.md", "repo": base / "repo", "use_model": False}
    common["python"] = user_python()
    await agent.run_from_paths(**common, test_timeout_s=30, suite_timeout_s=2400)  # type: ignore[arg-type]
    await agent.run_from_paths(**common)  # type: ignore[arg-type]
    assert (seen[0].test_timeout_s, seen[0].suite_timeout_s) == (30, 2400)
    default = AgentOptions()
    assert (seen[1].test_timeout_s, seen[1].suite_timeout_s) == (
        default.test_timeout_s,
        default.suite_timeout_s,
    )


def test_the_cli_passes_them_and_refuses_a_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    from fixbugs import cli
    from fixbugs.errors import InputError
    from fixbugs.run import agent

    seen: dict[str, object] = {}

    async def fake_from_paths(**kwargs: object) -> None:
        seen.update(kwargs)
        raise InputError("stopped here")

    monkeypatch.setattr(agent, "run_from_paths", fake_from_paths)
    runner = CliRunner()
    args = ["run", "--example", "invoice", "--no-model", "--test-timeout", "45"]
    out = runner.invoke(cli.app, [*args, "--suite-timeout", "1800"])
    assert isinstance(out.exception, InputError)  # fixbugs.cli.main turns it into one line
    assert (seen["test_timeout_s"], seen["suite_timeout_s"]) == (45, 1800)
    refused = runner.invoke(cli.app, ["run", "--example", "invoice", "--suite-timeout", "0"])
    assert refused.exit_code == 2 and "suite-timeout" in refused.output
