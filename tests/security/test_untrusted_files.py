"""Files a test could write are read back bounded: a FIFO or a link never hangs the agent.

Issue 14: ``cov.json`` replaced by a FIFO hung the CLI; made a symlink to
``/dev/zero`` it made the agent read 2.7 GB as root. Here a hostile
``conftest.py`` plants both in the folder where SBFL's coverage report is
written, and :func:`run_sbfl` (the real code path, through a real sandbox)
must come back with a note. ``asyncio.timeout`` is a liveness bound only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from hostile import NEEDS_NAMESPACES, PY, hostile, open_sandbox

from fixbugs.localize.sbfl import run_sbfl
from fixbugs.sandbox import CommandResult, Sandbox

pytestmark = NEEDS_NAMESPACES

TESTS = """
from pkg.calc import add


def test_ok():
    assert add(1, 1) == 2


def test_bad():
    assert add(2, 2) == 5
"""

# planted when the tests start (a link) or when pytest ends (a FIFO: planted
# earlier, the coverage run itself blocks on it until its own time limit)
PLANT = """
import glob, os


def plant():
    for d in glob.glob(".fixbugs-sbfl-*"):
        target = os.path.join(d, "cov.json")
        {plant}


{when}
"""
AT_IMPORT = "plant()"
AT_EXIT = "def pytest_unconfigure(config):\n    plant()"


class JsonCapped:
    """Runs in ``sb``; the contexts report (which a FIFO blocks) gets ``json_cap_s``."""

    def __init__(self, sb: Sandbox, json_cap_s: float) -> None:
        self.sb, self.root, self.json_cap_s = sb, sb.root, json_cap_s

    async def run(
        self, cmd: Sequence[str], *, timeout_s: float, env: Mapping[str, str] | None = None
    ) -> CommandResult:
        cap = self.json_cap_s if "fixbugs_sbfl_report" in cmd else timeout_s
        return await self.sb.run(list(cmd), timeout_s=min(timeout_s, cap), env=env)


@pytest.mark.parametrize(
    ("plant", "when", "refused"),
    [
        ("os.mkfifo(target)", AT_EXIT, "not a regular file"),
        ("os.symlink('/dev/zero', target)", AT_IMPORT, "refused"),
        ("os.symlink('/etc/shadow', target)", AT_IMPORT, "refused"),
    ],
    ids=["fifo", "link-to-dev-zero", "link-to-shadow"],
)
async def test_a_planted_coverage_report_is_refused_not_read(
    tmp_path: Path, sandboxes: list[Sandbox], plant: str, when: str, refused: str
) -> None:
    repo = hostile(tmp_path, TESTS, conftest__py="")
    (repo / "conftest.py").write_text(PLANT.format(plant=plant, when=when))
    sb = open_sandbox(repo, tmp_path)
    sandboxes.append(sb)
    async with asyncio.timeout(120):  # liveness bound: a hang fails here, not forever
        result = await run_sbfl(JsonCapped(sb, json_cap_s=10), Path(PY), ["test_attack.py"])
    assert result.file_scores == {}
    assert len(result.notes) == 1 and refused in result.notes[0], result.notes
    assert "root:" not in result.notes[0]  # nothing of /etc/shadow


async def test_a_control_repository_gets_its_spectrum(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    """Positive control: without the plant, the same run scores pkg/calc.py."""
    sb = open_sandbox(hostile(tmp_path, TESTS), tmp_path)
    sandboxes.append(sb)
    result = await run_sbfl(JsonCapped(sb, 60), Path(PY), ["test_attack.py"])
    assert "pkg/calc.py" in result.file_scores, result.notes
