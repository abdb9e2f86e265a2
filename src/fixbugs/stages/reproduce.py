"""The reproduction stage: see the bug fail before claiming anything about it.

The command is the user's (``--test``), else the one the report gives under
a "reproduce" heading or in a code block; the run confirms that it fails on
the current code, in the sandbox. A verbose run of the same test files
records which tests pass now, the baseline that validation holds a fix to.
"""

from __future__ import annotations

import re
from typing import Literal

from fixbugs.context import Reproduction, RunContext
from fixbugs.testrun import parse_outcomes, parse_test_command

__all__ = ["command_from_report", "reproduce"]

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
_TEST_CMD = re.compile(
    r"^\s*(?:\$\s*)?((?:python\d?(?:\.\d+)? -m (?:pytest|unittest)|pytest|py\.test|tox|nox|"
    r"make test|npm test|go test|cargo test)\b.*)$",
    re.M,
)


def command_from_report(text: str) -> str | None:
    """The first test command in a code block of the report, if any."""
    for block in _FENCE.findall(text):
        m = _TEST_CMD.search(block)
        if m:
            return m.group(1).strip()
    return None


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


async def reproduce(ctx: RunContext) -> Reproduction:
    report = ctx.inputs.report
    cmd = ctx.inputs.test_command
    origin: Literal["given", "report"] = "given"
    if not cmd:
        cmd = command_from_report(report.body + "\n" + "\n".join(report.comments))
        origin = "report"
    if not cmd:
        rep = Reproduction(
            None,
            "none",
            False,
            "no test command given or found in the report; "
            "pass --test CMD to reproduce and validate",
        )
        ctx.emit("reproduction", "reproduction", rep.summary)
        return rep
    opts = ctx.options
    run = await ctx.run_in(ctx.sandbox, cmd, "reproduce")
    output = run.stdout + "\n" + run.stderr
    if run.timed_out:
        summary, confirmed = f"`{cmd}` ran past {opts.test_timeout_s:.0f} s", False
    elif run.returncode == 0:
        summary, confirmed = "the command passes on the current code: bug not reproduced", False
    else:
        summary, confirmed = f"fails as reported (exit {run.returncode})", True
    parsed = parse_test_command(cmd)
    verbose = parsed.verbose()
    baseline: dict[str, str] = {}
    if confirmed and verbose:
        vrun = await ctx.run_in(ctx.sandbox, verbose, "baseline tests")
        baseline = dict(parse_outcomes(vrun.stdout + "\n" + vrun.stderr))
    rep = Reproduction(
        cmd,
        origin,
        confirmed,
        summary,
        baseline,
        verbose,
        _tail(output),
        parsed.suite(),
    )
    passing = sum(1 for v in baseline.values() if v == "passed")
    ctx.emit(
        "reproduction",
        "reproduction",
        f"{'confirmed' if confirmed else 'not confirmed'}: {summary}"
        + (f"; {passing} other test(s) pass now and must keep passing" if baseline else ""),
        command=cmd,
        origin=origin,
        confirmed=confirmed,
    )
    return rep
