"""A limit a test command hits is named in the run's notes, and so in its JSON report.

Issue 14: hitting a limit (the file-size cap) was not reported. Here a
hostile test fills its copy's disk through the agent's own seam for test
commands (``RunContext.run_in``), and the JSON report built from that run
says which limit was hit.
"""

from __future__ import annotations

import json
from pathlib import Path

from hostile import NEEDS_NAMESPACES, NEEDS_TMPFS, PY, hostile, open_sandbox, plain_context

from fixbugs.inputs import load_inputs
from fixbugs.run.driver import complete_report
from fixbugs.run.record import BugRun
from fixbugs.sandbox import Sandbox

pytestmark = [NEEDS_NAMESPACES, NEEDS_TMPFS]


async def test_a_disk_limit_hit_is_in_the_json_report(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    source = """
    def test_fill():
        for i in range(3):
            with open(f"big{i}", "wb") as f:
                f.write(b"x" * (16 << 20))
    """
    repo = hostile(tmp_path, source)
    report_md = tmp_path / "report.md"
    report_md.write_text("# add is wrong\n\nadd(2, 2) gives 5\n")
    inputs = load_inputs(report_md, repo)
    ctx = plain_context(inputs.repo)
    sb = open_sandbox(repo, tmp_path, disk_mb=32)
    sandboxes.append(sb)
    result = await ctx.run_in(sb, f"{PY} -m pytest -q -p no:cacheprovider", "reproduce")
    assert result.limit_hit == "disk", result.stdout + result.stderr
    data = json.loads(
        json.dumps(complete_report(inputs, BugRun(started=ctx.journal.started), ctx, ()).to_dict())
    )
    assert any("limit hit: disk" in n for n in data["notes"]), data["notes"]
