"""The command line as a user meets it: real processes, one-line errors."""

import json
import subprocess
import sys

import pytest


def run(*args: str, cwd=None, env=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentrt", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=env,
    )


def test_plan_prints_the_articles_example(tmp_path):
    out = tmp_path / "plan.json"
    p = run(
        "plan", "--output-tokens", "30000", "--tps", "50", "--parallel", "16", "--json", str(out)
    )
    assert p.returncode == 0, p.stderr
    assert "600.5 s" in p.stdout and "38.0 s" in p.stdout
    data = json.loads(out.read_text())
    assert data["single_call_s"] == pytest.approx(600.5) and 37 < data["fanout_s"] < 41


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("sim", "serve", "--profile", "nope"), "unknown simulator profile 'nope'"),
        (("bench", "nope"), "unknown benchmark 'nope'"),
        (("bench", "calibration", "--set", "colour=red"), "expected KEY=VALUE"),
        (("plan", "--output-tokens", "10", "--parallel", "0"), "--parallel must be at least 1"),
        (("demo", "--config", "/nonexistent/agentrt.toml"), "does not exist"),
    ],
)
def test_user_errors_are_one_line_without_traceback(args, message):
    p = run(*args)
    assert p.returncode != 0
    assert message in p.stderr
    assert "Traceback" not in p.stderr + p.stdout
    assert len(p.stderr.strip().splitlines()) == 1


def test_bad_config_file_is_named(tmp_path):
    bad = tmp_path / "agentrt.toml"
    bad.write_text("[endpoints.x]\nkind = 'telegraph'\n")
    p = run("demo", "--config", str(bad))
    assert p.returncode == 2 and "endpoints.x.kind" in p.stderr and "Traceback" not in p.stderr


def test_unreachable_endpoint_is_a_clear_error(tmp_path):
    env = {"AGENTRT_BASE_URL": "http://127.0.0.1:9/v1", "AGENTRT_MODEL": "m", "PATH": ""}
    p = run("demo", env=env, cwd=tmp_path)
    assert p.returncode == 2
    assert "cannot reach model endpoint http://127.0.0.1:9/v1" in p.stderr
    assert "Traceback" not in p.stderr


def test_demo_runs_on_the_embedded_model(tmp_path):
    out = tmp_path / "run.json"
    # two chunks' worth (three map calls) rather than the default five: the embedded
    # model's CPU time is this test's cost, and three calls still scatter and gather
    p = run("demo", "--chunks", "2", "--json", str(out), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    data = json.loads(out.read_text())
    assert set(data["stages"]) == {"map", "reduce"}
    assert [c["stage"] for c in data["calls"]].count("map") == data["demo"]["chunks"] == 3
    assert all(c["outcome"] == "ok" and c["output_tokens"] > 0 for c in data["calls"])
    reduce_call = next(c for c in data["calls"] if c["stage"] == "reduce")
    assert reduce_call["streamed"] and reduce_call["ttft_s"] is not None
