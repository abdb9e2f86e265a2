"""Issue 45's done-when: with ``OPENAI_BASE_URL`` pointing at the simulator and no config
file, ``fixbugs run --example invoice`` uses it, and its first line says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentrt.sim import SimProfile, create_app, serving_in_thread

FIXBUGS = [sys.executable, "-c", "from fixbugs.cli import main; main()"]
# the variables that would name an endpoint or a config file: none but OPENAI_BASE_URL
_CONFIGURING = ("OPENAI_", "ANTHROPIC_", "AGENTRT_")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CONFIGURING)}
    return env | extra


def _run(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*FIXBUGS, "run", "--example", "invoice", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,  # no agentrt.toml here
        env=env | {"COLUMNS": "400"},  # one line per line: no wrapping by the terminal width
    )


def test_openai_base_url_at_the_simulator_serves_the_run_and_the_first_line_says_so(
    tmp_path: Path,
) -> None:
    profile = SimProfile(name="fast", time_scale=1000.0)  # the sim's latency, 1000x faster
    app = create_app(profile)
    out = tmp_path / "report.json"
    with serving_in_thread(app) as url:
        p = _run(tmp_path, _env(OPENAI_BASE_URL=url), "--json", str(out), "--repair-budget", "20")
        served = app.state.engine.stats()["requests"]
    assert p.returncode == 0, p.stderr[-2000:]
    first = p.stdout.splitlines()[0]
    assert first.startswith("models: map and judge → openai: sim-model at " + url), first
    assert "from $OPENAI_BASE_URL" in first
    report = json.loads(out.read_text())
    calls = report["model_calls"]
    assert calls is not None and calls["total"] > 0 and calls["failed"] == 0
    assert report["cost"]["input_tokens"] > 0  # the simulator's answers were counted
    assert any(n.startswith("models: map and judge → openai") for n in report["notes"])
    # the simulator answered the preflight and every call the report counts
    assert isinstance(served, int) and served >= calls["total"] + 1


def test_without_any_endpoint_the_first_line_says_none_is_used_and_what_the_run_does(
    tmp_path: Path,
) -> None:
    p = _run(tmp_path, _env(AGENTRT_LOCAL_PORTS=""), "--repair-budget", "20")
    assert p.returncode == 0, p.stderr[-2000:]
    first = p.stdout.splitlines()[0]
    assert first.startswith("models: none used: local (smollm2-135m) takes no step"), first
    assert "static evidence" in first and "OPENAI_API_KEY" in first
