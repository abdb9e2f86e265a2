"""The texts a fix is handed over with, and ``fixbugs run --branch/--pr-body`` as a user runs it.

The commit message and the pull-request text come from a typed report
built here: they name the root cause with file:line, the reproduction,
what validated the fix and what nothing checked; the repository's strings
make no markdown structure and no control character reaches them. The
``--pr-body`` file replaces a link planted at its name, never follows it.
The CLI is driven through typer's runner with the run itself faked: the
options reach the branch and the file, and are refused as they should be.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitkit import git as _git
from test_host_branch import BUGGY, PATCH  # one bug and its fix for both
from typer.testing import CliRunner

from fixbugs.errors import InputError
from fixbugs.repair.summary import RepairSummary
from fixbugs.repair.verdict import VerdictLevel
from fixbugs.run.handoff import commit_message, pr_body, write_pr_body
from fixbugs.run.report import RunReport
from fixbugs.run.report_schema import ReportModel


def _report(
    level: VerdictLevel = VerdictLevel.VALIDATED,
    *,
    title: str = "add subtracts",
    explanation: str = "returns a - b where the sum is meant",
    confirmed: bool = True,
    patch: str | None = PATCH,
) -> ReportModel:
    failed = [{"kind": "swallows", "why": "calc.py:2 catches ValueError"}]
    return ReportModel.model_validate(
        {
            "title": title,
            "ranked_files": [],
            "root_cause": {
                "path": "calc.py",
                "function": "add",
                "lines": [2, 3],
                "explanation": explanation,
                "origin": "sbfl",
            },
            "patch": patch,
            "validated": level == VerdictLevel.VALIDATED,
            "verdict": level.value,
            "validation": {
                "summary": "1 of 4 candidates validated",
                "tried": 4,
                "failed_checks": failed if level == VerdictLevel.PASSES_TESTS else [],
            },
            "reproduction": {
                "command": "pytest -q test_calc.py",
                "origin": "given",
                "confirmed": confirmed,
                "status": "confirmed" if confirmed else "could_not_run",
                "summary": "test_add failed" if confirmed else "no module named pytest",
                "sbfl_skipped": None if confirmed else "the bug was not reproduced",
            },
            "first_hypothesis_s": None,
            "total_s": 1.0,
            "stages": {},
        }
    )


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_commit_message_names_cause_evidence_and_validation() -> None:
    message = commit_message(_report())
    subject, blank, *_ = message.splitlines()
    assert (subject, blank) == ("Fix add subtracts", "")
    assert all(len(line) <= 72 for line in message.splitlines())
    flat = _flat(message)
    assert "Root cause: calc.py:2-3 in add (found by sbfl): returns a - b where the sum" in flat
    assert "Evidence: reproduced (given): `pytest -q test_calc.py` failed before the fix" in flat
    assert "Validation: validated (1 of 4 candidates validated)" in flat
    assert "the failing tests (`pytest -q test_calc.py`) now pass" in flat
    assert "The repository's own tests were the only judge" in flat


def test_both_texts_say_where_the_change_is_when_the_repair_kept_it() -> None:
    lead = {
        "id": 7,
        "path": "calc.py",
        "template": "operator",
        "why": "`-` -> `+`",
        "lines": [2, 2],
        "score": 1.0,
        "suspiciousness": 1.0,
        "prior": 1.0,
        "naturalness": 0.0,
        "diff_lines": 2,
        "overfit_risk": "low",
        "shape": None,
        "shape_reason": None,
        "diff": PATCH,
        "validated": True,
        "seconds": 1.0,
        "found_at_s": 1.0,
    }
    repair = {
        "candidates": 4,
        "validated": [lead],
        "first_validated_s": 1.0,
        "wall_s": 2.0,
        "rejected_by_stage": {},
        "outcomes_by_status": {},
        "budget_spent": False,
        "outcomes": [],
    }
    report = _report().model_copy(update={"repair": RepairSummary.model_validate(repair)})
    assert "Change: calc.py:2, operator: `-` -> `+`" in commit_message(report)
    assert "The change: calc.py:2, operator: \\`-\\` -\\> \\`+\\`." in pr_body(report)
    assert "Change:" not in commit_message(_report())  # no repair record: not said


def test_a_forced_commit_says_what_did_not_hold() -> None:
    flat = _flat(commit_message(_report(VerdictLevel.PASSES_TESTS)))
    forced = "not validated (1 of 4 candidates validated); committed with --force."
    assert f"Validation: passes the tests, {forced}" in flat
    assert "Not held: swallows the exception: calc.py:2 catches ValueError." in flat
    assert "What held" not in flat


def test_the_pr_body_has_its_sections_in_order() -> None:
    body = pr_body(_report(VerdictLevel.PASSES_TESTS))
    heads = [line for line in body.splitlines() if line.startswith("## ")]
    assert heads == [
        "## Summary",
        "## Root cause",
        "## Reproduction",
        "## What validated it",
        "## What it did not check",
    ]
    assert "`calc.py:2-3` in `add` (found by sbfl)" in body
    assert "(+1 -1 lines). Verdict: **passes the tests, not validated**" in body
    assert "Reproduced (given): `pytest -q test_calc.py` failed before the fix" in body
    assert "- it swallows the exception: calc.py:2 catches ValueError" in body
    assert "only judge" in body


def test_an_unreproduced_bug_is_a_limit_of_the_pr() -> None:
    body = pr_body(_report(confirmed=False))
    unchecked = body.split("## What it did not check")[1]
    assert "The bug itself: not reproduced" in unchecked
    assert "SBFL did not run" in unchecked
    assert "no reproducing test ran before the fix" in body


def test_the_repositorys_strings_make_no_structure() -> None:
    hostile = "x\n## Injected\n\x1b[31m<img src=x>`code`\x07"
    report = _report(title=hostile, explanation=hostile)
    body = pr_body(report)
    assert [line for line in body.splitlines() if "Injected" in line and line.startswith("#")] == []
    assert "\x1b" not in body and "\x07" not in body
    assert body.count("<img") == body.count("\\<img") == 2  # escaped: no HTML
    message = commit_message(report)
    assert "\x1b" not in message and "\x07" not in message
    assert message.splitlines()[0].startswith("Fix x ## Injected")


def test_the_pr_body_replaces_a_planted_link(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("keep\n")
    (tmp_path / "pr.md").symlink_to(secret)
    assert (
        write_pr_body(_report(), tmp_path / "pr.md")
        == f"pull-request text written to {tmp_path / 'pr.md'}"
    )
    assert not (tmp_path / "pr.md").is_symlink()
    assert (tmp_path / "pr.md").read_text().startswith("## Summary")
    assert secret.read_text() == "keep\n"
    assert "no pull-request text" in write_pr_body(
        _report(VerdictLevel.NO_FIX, patch=None), tmp_path / "x.md"
    )
    assert not (tmp_path / "x.md").exists()
    with pytest.raises(InputError, match="--pr-body: cannot write"):
        write_pr_body(_report(), tmp_path / "missing" / "pr.md")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text(BUGGY)
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "init")
    return repo


def _fake_run(monkeypatch: pytest.MonkeyPatch, report: ReportModel) -> list[str]:
    from fixbugs.run import agent

    ran: list[str] = []

    async def fake(**kwargs: object) -> RunReport:
        ran.append("run")
        return RunReport(report)

    monkeypatch.setattr(agent, "run_from_paths", fake)
    return ran


def test_the_cli_makes_the_branch_and_writes_the_pr_body(
    monkeypatch: pytest.MonkeyPatch, repo: Path, tmp_path: Path
) -> None:
    from fixbugs import cli

    _fake_run(monkeypatch, _report())
    for k in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(k, raising=False)
    args = ["run", "--report", str(tmp_path / "r.md"), "--repo", str(repo), "--no-model"]
    out = CliRunner().invoke(
        cli.app, [*args, "--branch", "fix/add", "--pr-body", str(tmp_path / "pr.md")]
    )
    assert out.exit_code == 0, out.output
    flat = _flat(out.output)
    assert "branch fix/add made in" in flat and "FixBugs <fixbugs@localhost>" in flat
    assert "pull-request text written to" in flat
    assert (tmp_path / "pr.md").read_text().startswith("## Summary")
    assert _git(repo, "log", "-1", "--format=%s", "fix/add") == "Fix add subtracts"
    assert _git(repo, "symbolic-ref", "--short", "HEAD") == "main"


def test_the_cli_refuses_before_the_run_and_says_no_branch_without_force_after_it(
    monkeypatch: pytest.MonkeyPatch, repo: Path, tmp_path: Path
) -> None:
    from fixbugs import cli

    ran = _fake_run(monkeypatch, _report(VerdictLevel.PASSES_TESTS))
    runner = CliRunner()
    args = ["run", "--report", str(tmp_path / "r.md"), "--no-model", "--branch"]
    out = runner.invoke(cli.app, [*args, "a..b", "--repo", str(repo)])
    assert isinstance(out.exception, InputError) and "not a valid branch name" in str(out.exception)
    out = runner.invoke(cli.app, [*args, "main", "--repo", str(repo)])
    assert isinstance(out.exception, InputError) and "already exists" in str(out.exception)
    out = runner.invoke(cli.app, ["run", "--example", "invoice", "--branch", "fix/x"])
    assert isinstance(out.exception, InputError) and "bundled example" in str(out.exception)
    assert ran == []  # each refused before the run
    out = runner.invoke(cli.app, [*args, "fix/add", "--repo", str(repo)])
    # the run ended well without a validated fix: no branch, said, exit 0 (as --apply)
    assert out.exit_code == 0 and "no branch made" in _flat(out.output)
    assert "--force" in _flat(out.output) and "fix/add" not in _git(repo, "branch")
    out = runner.invoke(cli.app, [*args, "fix/add", "--repo", str(repo), "--force"])
    assert out.exit_code == 0 and "not validated (--force)" in _flat(out.output)


def test_run_help_shows_the_options(monkeypatch: pytest.MonkeyPatch) -> None:
    from fixbugs import cli

    monkeypatch.setenv("COLUMNS", "200")
    out = CliRunner().invoke(cli.app, ["run", "--help"])
    assert out.exit_code == 0
    assert "--branch" in out.output and "--pr-body" in out.output
    assert "With --apply or --branch" in out.output


def test_the_cli_writes_json_and_markdown_over_planted_links_not_through_them(
    monkeypatch: pytest.MonkeyPatch, repo: Path, tmp_path: Path
) -> None:
    """A repository can commit ``run.json -> /etc/passwd`` where a user writes the report."""
    from fixbugs import cli

    _fake_run(monkeypatch, _report())
    secret = tmp_path / "secret"
    secret.write_text("keep\n")
    for name in ("run.json", "run.md"):
        (repo / name).symlink_to(secret)
    args = ["run", "--report", str(tmp_path / "r.md"), "--repo", str(repo), "--no-model"]
    out = CliRunner().invoke(
        cli.app, [*args, "--json", str(repo / "run.json"), "--markdown", str(repo / "run.md")]
    )
    assert out.exit_code == 0, out.output
    assert secret.read_text() == "keep\n"
    assert not (repo / "run.json").is_symlink() and not (repo / "run.md").is_symlink()
    assert RunReport.from_dict(json.loads((repo / "run.json").read_text())).model == _report()
    assert (repo / "run.md").read_text() == RunReport(_report()).markdown()
    out = CliRunner().invoke(cli.app, [*args, "--json", str(tmp_path / "gone" / "run.json")])
    # a user error: `fixbugs` prints its one line and exits 2 (agentrt.cli.run_app)
    assert isinstance(out.exception, InputError) and "--json: cannot write" in str(out.exception)
