"""The published report schema (``fixbugs schema``) describes what ``fixbugs run --json`` writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from fixbugs import cli
from fixbugs.run.progress import NO_DATA, CandidateData, ProgressEvent, ReproductionData
from fixbugs.run.report_schema import REPORT_VERSION, ReportModel

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


def _version_2_report(reproduction_data: dict[str, Any]) -> dict[str, Any]:
    """A report as version 2 wrote it: its events' data were loose objects."""
    return {
        "version": 2,
        "title": "t",
        "ranked_files": [],
        "root_cause": None,
        "patch": None,
        "validated": False,
        "validation": {"summary": "no fix", "tried": 1},
        "reproduction": {
            "command": "pytest -q",
            "origin": "given",
            "confirmed": False,
            "summary": "could not run: no pytest",
            "status": "could_not_run",
        },
        "first_hypothesis_s": None,
        "total_s": 1.0,
        "stages": {},
        "events": [
            {"kind": "note", "stage": "reproduction", "at_s": 0.1, "message": "tests run with",
             "data": {"python": "/usr/bin/python3", "pytest": None}},
            {"kind": "reproduction", "stage": "reproduction", "at_s": 0.2, "message": "no",
             "data": reproduction_data},
            {"kind": "candidate", "stage": "validation", "at_s": 0.3, "message": "rejected #1",
             "data": {}},
        ],
    }  # fmt: skip


def test_a_version_2_report_reads_back_with_typed_event_data() -> None:
    # the reproduction event said only command and origin (or nothing): the report's
    # reproduction says the rest
    for said in ({"command": "pytest -q", "origin": "given"}, {}):
        note, repro, rejected = ReportModel.model_validate(_version_2_report(said)).events
        assert note.data == NO_DATA
        assert repro.data == ReproductionData("pytest -q", "given", False, "could_not_run")
        assert rejected.data == CandidateData()


def test_event_data_of_another_kind_is_refused() -> None:
    with pytest.raises(TypeError, match="a judgment event carries JudgmentData"):
        ProgressEvent("judgment", "root_cause", 0.0, "", NO_DATA)
    report = {**_version_2_report({}), "version": REPORT_VERSION}
    with pytest.raises(ValidationError):  # version 3: the event must say it all
        ReportModel.model_validate(report)
