"""`fixbugs run` with bad input: one line, exit 2, nothing lost, no traceback."""

import subprocess
import sys

import pytest


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from fixbugs.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def report(tmp_path):
    p = tmp_path / "r.md"
    p.write_text("# crash in parser\n\nTraceback...\n")
    return p


def _check(p: subprocess.CompletedProcess[str], message: str) -> None:
    assert p.returncode == 2, p.stderr
    assert message in p.stderr
    assert "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_missing_report(tmp_path):
    _check(
        run("run", "--report", str(tmp_path / "no.md"), "--repo", str(tmp_path)), "does not exist"
    )


def test_empty_repository(tmp_path, report):
    empty = tmp_path / "empty"
    empty.mkdir()
    _check(run("run", "--report", str(report), "--repo", str(empty)), "no text source files")


def test_a_binary_log_is_left_out_in_one_line_and_the_run_goes_on(tmp_path, report):
    """It exists but is no text log (issue 47: bad inputs get one line, the run goes on)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "m.py").write_text("x = 1\n")
    log = tmp_path / "core.log"
    log.write_bytes(b"\x7fELF\x00\x01\x02" * 1000)
    p = run("run", "--report", str(report), "--repo", str(repo), "--logs", str(log), "--no-model")
    assert p.returncode == 0, p.stderr
    assert "core.log is binary, not a text log" in " ".join(p.stdout.split())  # wrapped
    assert "Traceback" not in p.stdout + p.stderr


def test_a_missing_log_is_refused_by_name(tmp_path, report):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "m.py").write_text("x = 1\n")
    log = tmp_path / "nothere.log"
    p = run("run", "--report", str(report), "--repo", str(repo), "--logs", str(log), "--no-model")
    _check(p, "nothere.log does not exist")


def test_truncated_trace_json(tmp_path, report):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "m.py").write_text("x = 1\n")
    tr = tmp_path / "t.json"
    tr.write_text('{"resourceSpans": [{"resource": ')
    p = run("run", "--report", str(report), "--repo", str(repo), "--traces", str(tr), "--no-model")
    _check(p, "not valid JSON")


def test_unknown_example_and_missing_arguments():
    _check(run("run", "--example", "nope"), "unknown example 'nope'")
    _check(run("run"), "give --report and --repo")


def test_python_that_is_not_an_interpreter(tmp_path, report):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "m.py").write_text("x = 1\n")
    p = run("run", "--report", str(report), "--repo", str(repo), "--no-model", "--python", "/nope")
    _check(p, "--python /nope: not an executable file")
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho broken >&2\nexit 1\n")
    fake.chmod(0o755)
    p = run(
        "run", "--report", str(report), "--repo", str(repo), "--no-model", "--python", str(fake)
    )
    _check(p, "does not run: broken")
