"""FixBugs' host tools run through one runner: no shell, a small environment, a timeout."""

from __future__ import annotations

import sys
from pathlib import Path

from fixbugs.sandbox.hosttools import NOT_STARTED, host_env, run_tool, stream_tool

SHOW_ENV = "import json, os; print(json.dumps(dict(os.environ)))"


def test_a_tool_sees_a_small_environment_without_the_callers_secrets(monkeypatch) -> None:
    monkeypatch.setenv("FIXBUGS_API_KEY", "sk-secret")
    monkeypatch.setenv("GIT_DIR", "/tmp/elsewhere")
    monkeypatch.setenv("PIP_INDEX_URL", "http://mirror.invalid/simple")
    done = run_tool([sys.executable, "-c", SHOW_ENV], timeout_s=30)
    assert done.ok, done.said()
    seen = __import__("json").loads(done.stdout_text)
    assert "FIXBUGS_API_KEY" not in seen and "GIT_DIR" not in seen
    assert "sk-secret" not in done.stdout_text
    assert seen["PIP_INDEX_URL"] == "http://mirror.invalid/simple"  # pip still finds its index
    assert seen["PATH"]


def test_host_env_keeps_only_named_prefixes() -> None:
    environ = {"PATH": "/bin", "PYENV_VERSION": "3.10", "AWS_SECRET": "x", "https_proxy": "p"}
    assert host_env(environ=environ) == {"PATH": "/bin", "https_proxy": "p"}
    assert host_env(environ=environ, keep=("PYENV",))["PYENV_VERSION"] == "3.10"


def test_no_shell_reads_the_arguments(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    done = run_tool(["echo", f"x; touch {marker}", f"$(touch {marker})"], timeout_s=30)
    assert done.ok and not marker.exists()
    assert done.stdout_text.startswith("x; touch")


def test_a_tool_that_cannot_start_or_runs_too_long_is_said_not_raised(tmp_path: Path) -> None:
    missing = run_tool([str(tmp_path / "no-such-tool")], timeout_s=30)
    assert missing.returncode == NOT_STARTED and not missing.ok and "no-such-tool" in missing.said()
    slow = run_tool([sys.executable, "-c", "import time; time.sleep(60)"], timeout_s=0.5)
    assert slow.timed_out and not slow.ok and "gave up after 0.5 s" in slow.said()


def test_stdin_is_given_or_empty() -> None:
    echoed = run_tool(
        [sys.executable, "-c", "import sys; print(sys.stdin.read())"], timeout_s=30, stdin=b"hi"
    )
    assert echoed.stdout_text.strip() == "hi"
    empty = run_tool(
        [sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"], timeout_s=30
    )
    assert empty.stdout_text.strip() == "''"


def test_a_streamed_tool_does_not_outlive_its_block(tmp_path: Path) -> None:
    feed = tmp_path / "in"
    feed.write_bytes(b"line\n")
    script = (
        "import sys, time; sys.stdout.write(sys.stdin.readline()); sys.stdout.flush(); "
        "time.sleep(60)"
    )
    with feed.open("rb") as stdin, stream_tool([sys.executable, "-c", script], stdin=stdin) as out:
        assert out.readline() == b"line\n"
    # the block is left while the tool sleeps: it was killed, so this returns at once
    assert out.closed
