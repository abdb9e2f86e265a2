"""The service reads a job's report, logs and traces in a process it kills at a deadline."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixbugs.errors import InputError
from fixbugs.inputs import load_inputs
from fixbugs.inputs.isolated import load_inputs_isolated


def _bug(tmp_path: Path, report: str) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    path = tmp_path / "r.md"
    path.write_text(report)
    return path, repo


async def test_reads_what_load_inputs_reads(tmp_path: Path) -> None:
    report, repo = _bug(tmp_path, "# add is wrong\n\x1b[31mred\x1b[0m `add(2, 2)` gives 0\n")
    isolated = await load_inputs_isolated(report, repo, test=" pytest ")
    direct = load_inputs(report, repo, test=" pytest ")
    assert isolated.report == direct.report
    assert isolated.notes == direct.notes and isolated.test_command == "pytest"


async def test_a_bad_input_is_the_same_one_line_error(tmp_path: Path) -> None:
    report, repo = _bug(tmp_path, "{")
    bad = report.rename(tmp_path / "r.json")
    with pytest.raises(InputError, match="is not valid JSON") as caught:
        await load_inputs_isolated(bad, repo)
    assert "\n" not in str(caught.value)


async def test_past_the_deadline_the_job_fails_in_one_line(tmp_path: Path) -> None:
    report, repo = _bug(tmp_path, "# slow\n" + "```py\n" * 10_000)
    # no interpreter starts in a millisecond: the deadline passes while it reads
    with pytest.raises(InputError, match=r"^the report took more than 0\.001 s to read; "):
        await load_inputs_isolated(report, repo, deadline_s=0.001)


async def test_a_lone_surrogate_in_a_github_issue_comes_back_as_read(tmp_path: Path) -> None:
    """Found by tests/security/test_fuzz_parsers.py: a JSON escape of half a character
    made the reading process's JSON answer fail, and the job with a traceback's line."""
    report, repo = _bug(tmp_path, '{"title": "a\\ud800b", "body": "x\\udfff y"}')
    issue = report.rename(tmp_path / "r.json")
    isolated = await load_inputs_isolated(issue, repo)
    assert isolated.report == load_inputs(issue, repo).report
    assert isolated.report.title == "a\ud800b"
