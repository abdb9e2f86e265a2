"""The published report schema (``fixbugs schema``) describes what ``fixbugs run --json`` writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from fixbugs import cli
from fixbugs.run.report_schema import ReportModel

FIXBUGS = [sys.executable, "-c", "from fixbugs.cli import main; main()"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FIXBUGS, *args], capture_output=True, text=True, timeout=300)


def _props(schema: dict[str, Any], ref: str) -> set[str]:
    return set(schema["$defs"][ref.rsplit("/", 1)[-1]]["properties"])


def test_the_schema_describes_every_key_a_run_writes(tmp_path: Path) -> None:
    # in this process: a second interpreter would only add its start-up
    # (test_schema_prints_to_stdout runs the command as a user does)
    done = CliRunner().invoke(cli.app, ["schema", "--out", str(tmp_path / "schema.json")])
    assert done.exit_code == 0, done.output
    schema = json.loads((tmp_path / "schema.json").read_text())
    out = tmp_path / "run.json"
    p = _run("run", "--example", "invoice", "--no-model", "--json", str(out))
    assert p.returncode == 0, p.stderr
    report = json.loads(out.read_text())
    ReportModel.model_validate(report)  # types and required fields hold
    assert set(report) <= set(schema["properties"])
    assert set(schema["required"]) <= set(report)
    rc = report["root_cause"]
    assert rc is not None and set(rc) <= _props(schema, "RootCauseItem")
    assert {"path", "function", "lines", "explanation", "evidence"} <= set(rc)
    assert report["suspicious_regions"], "a run with evidence lists its regions"
    for region in report["suspicious_regions"]:
        assert set(region) == _props(schema, "RegionItem")
    for figures in report["stages"].values():
        assert set(figures) <= _props(schema, "StageFigures")
    assert set(report["reproduction"]) <= _props(schema, "ReproductionItem")


def test_schema_prints_to_stdout() -> None:
    p = _run("schema")
    assert p.returncode == 0, p.stderr
    schema = json.loads(p.stdout)
    assert schema["$id"] == "fixbugs-report" and "root_cause" in schema["properties"]
