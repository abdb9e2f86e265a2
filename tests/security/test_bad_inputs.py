"""Every bad input is a one-line refusal, a note, or a run that finishes (issue 41, items 2, 4).

Seen: a GitHub-JSON report nested 200,000 deep or holding a 100,000-digit
number answered a bare 500; traces nested deep, holding a 4 MB integer or
``1e999`` were accepted and the job then died on a raw exception; a
repository holding a lone-surrogate string literal (pytest's own sources
write ``'\\udcff'``) crashed the run in the index cache's insert, with a
traceback and no report; a file named in invalid UTF-8 was accepted. Each
input is built here: uploads get a one-line 400, the CLI drops a hostile
trace with a note and finishes (exit 0, no traceback), and a job or route
that fails anyway says why in one line that names no server path.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from svckit import InProcess, in_process, memory_service, tar_gz

from agentrt import FakeClock
from fixbugs.run.progress import EventSink
from fixbugs.run.report_schema import ReportModel
from fixbugs.service import ApiKeys, BugSpec, create_app

KEY = "bad-inputs-key"
REPO = tar_gz({"repo/pkg/__init__.py": b"", "repo/pkg/calc.py": b"def add(a, b):\n    return a\n"})


def span_doc(**span: Any) -> dict[str, Any]:
    base = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "GET /", **span}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [base]}]}]}


def deep(n: int) -> str:
    return '{"title": "x", "body": ' + "[" * n + "]" * n + "}"


# hostile trace files: name -> text
TRACES = {
    "deep.json": '{"resourceSpans": ' + "[" * 200_000 + "]" * 200_000 + "}",
    "huge-number.json": '{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": '
    + "9" * 4_000_000
    + "}]}]}]}",
    "huge-int-string.json": json.dumps(span_doc(startTimeUnixNano="7" * 4_000_000)),
    "inf.json": '{"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": '
    '[{"key": "k", "value": {"doubleValue": 1e999}}]}]}]}]}',
    "nan-string.json": json.dumps(
        span_doc(attributes=[{"key": "k", "value": {"doubleValue": "NaN"}}])
    ),
    "nan.json": '{"resourceSpans": [], "x": NaN}',
}


async def quiet(spec: BugSpec, sink: EventSink) -> ReportModel:
    raise AssertionError("no bad input may reach a run")


@pytest.fixture
async def svc(tmp_path: Path) -> AsyncIterator[InProcess]:
    clock = FakeClock()
    service = memory_service(tmp_path / "ws", quiet, clock=clock)
    app = create_app(service, keys=ApiKeys({KEY: "acme"}), run_workers=False)
    async with in_process(app, service, workers=False) as client:
        yield InProcess(client, service, clock)


def one_line(r: httpx.Response, status: int, *words: str) -> str:
    assert r.status_code == status, r.text[:300]
    detail: str = r.json()["detail"]
    assert "\n" not in detail and "Traceback" not in detail and len(detail) < 600, detail[:600]
    assert all(w in detail for w in words), detail
    assert "/tmp" not in detail and str(Path.cwd()) not in detail, detail
    return detail


async def post(svc: InProcess, report: bytes, name: str = "r.json", **more: Any) -> httpx.Response:
    files: list[tuple[str, tuple[str, bytes]]] = [
        ("report", (name, report)),
        ("repo", ("r.tar.gz", REPO)),
    ]
    files += [("traces", t) for t in more.get("traces", ())]
    return await svc.client.post("/v1/bugs/upload", headers={"X-API-Key": KEY}, files=files)


@pytest.mark.parametrize(
    ("report", "words"),
    [
        (deep(200_000), ("nests JSON deeper than 64 levels",)),
        ('{"title": "x", "n": ' + "1" * 100_000 + "}", ("a number of 100000 characters",)),
        ('{"title": "x", "n": -' + "2" * 5_000 + ".5e3}", ("a number of 5005 characters",)),
        ('{"title": "x", "n": 1e999}', ("1e999", "finite")),
        ('{"title": "x", "n": -Infinity}', ("-Infinity", "finite")),
    ],
    ids=["200000-deep", "100000-digits", "5000-digit-float", "1e999", "infinity"],
)
async def test_a_hostile_json_report_is_a_one_line_400(
    svc: InProcess, report: str, words: tuple[str, ...]
) -> None:
    one_line(await post(svc, report.encode()), 400, *words)
    assert list((svc.service.workspace.root / "jobs").iterdir()) == []


async def test_a_deep_report_under_another_name_is_refused_too(svc: InProcess) -> None:
    # no .json suffix: the text is sniffed as JSON, and the sniff is bounded as well
    one_line(await post(svc, deep(200_000).encode(), name="report.txt"), 400, "deeper than 64")


@pytest.mark.parametrize("name", sorted(TRACES))
async def test_a_hostile_trace_upload_is_a_one_line_400(svc: InProcess, name: str) -> None:
    r = await post(svc, b"# add is wrong\n", name="r.md", traces=[(name, TRACES[name].encode())])
    one_line(r, 400, "trace file")


async def test_an_unexpected_error_answers_one_line_not_a_bare_500(
    svc: InProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fixbugs.inputs

    def broken(path: Path) -> None:
        raise RuntimeError(f"parser state lost\nwhile reading {path}\n  at frame 3")

    monkeypatch.setattr(fixbugs.inputs, "load_report", broken)
    r = await post(svc, b"# x\n", name="r.md")
    detail = one_line(r, 500, "internal error", "RuntimeError", "parser state lost")
    assert "input/r.md" in detail  # the job's own path, relative; the server's root is gone


async def test_a_queue_store_out_of_reach_is_a_503_that_names_no_address(
    svc: InProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentrt.queues import QueueUnavailable

    async def down(*_: object, **__: object) -> None:
        raise QueueUnavailable("Error 111 connecting to 10.0.0.7:6379. Connection refused.")

    monkeypatch.setattr(svc.service.backend, "put", down)
    r = await post(svc, b"# x\n", name="r.md")
    detail = one_line(r, 503, "cannot be reached", "try again")
    assert r.headers["Retry-After"].isdigit()
    assert "10.0.0.7" not in detail and "6379" not in detail


async def test_a_job_that_fails_says_why_in_one_line(tmp_path: Path) -> None:
    async def crashing(spec: BugSpec, sink: EventSink) -> ReportModel:
        raise RuntimeError(f"{spec.repo}/pkg\nTraceback (most recent call last):\n  boom")

    service = memory_service(tmp_path / "ws", crashing)
    app = create_app(service, keys=ApiKeys({KEY: "acme"}), run_workers=False)
    async with in_process(app, service) as client:
        files = {"report": ("r.md", b"# add\n"), "repo": ("r.tar.gz", REPO)}
        r = await client.post("/v1/bugs/upload", headers={"X-API-Key": KEY}, files=files)
        job = r.json()["id"]
        events = []
        async with asyncio.timeout(30):  # liveness only: the stream ends with the job
            async with client.stream(
                "GET", f"/v1/bugs/{job}/events", headers={"X-API-Key": KEY}
            ) as stream:
                async for line in stream.aiter_lines():
                    events.append(line)
                    if line.startswith("event: end"):
                        break
        status = (await client.get(f"/v1/bugs/{job}", headers={"X-API-Key": KEY})).json()
    assert status["state"] in ("failed", "dead"), status
    error = status["error"]
    assert error.startswith("RuntimeError:") and "\n" not in error and str(tmp_path) not in error
    data = [json.loads(e[6:]) for e in events if e.startswith("data: ")]
    failed = [ev for ev in data if ev.get("kind") == "failed"]
    assert failed, events
    for ev in failed:
        assert "\n" not in ev["message"] and str(tmp_path) not in ev["message"], ev


# -- through the CLI: a note, the trace left out, the run goes on ------------------------


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from fixbugs.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=600,  # a liveness bound: the run itself takes seconds
        env={**os.environ, **(env or {})},
    )


def small_repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return root


def test_hostile_traces_are_left_out_with_a_note_and_the_run_finishes(tmp_path: Path) -> None:
    repo = small_repo(tmp_path / "repo")
    report = tmp_path / "r.md"
    report.write_text("# add subtracts\n\n`add(2, 2)` gives 0.\n")
    args = ["run", "--report", str(report), "--repo", str(repo), "--no-model"]
    for name, text in TRACES.items():
        (tmp_path / name).write_text(text)
        args += ["--traces", str(tmp_path / name)]
    out = tmp_path / "out.json"
    p = cli(*args, "--json", str(out), env={"FIXBUGS_INDEX_DIR": str(tmp_path / "index")})
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Traceback" not in p.stderr + p.stdout
    notes = json.loads(out.read_text())["notes"]
    for name in TRACES:
        left_out = [n for n in notes if name in n and n.endswith("the trace is left out")]
        assert len(left_out) == 1 and "\n" not in left_out[0], (name, notes)


LONE_SURROGATE = (
    "# pytest's own sources hold such a literal (src/_pytest/compat.py)\n"
    "MARK = '\\udcff'\n"
    "BOTH = 'caf\\xe9 \\ud800'\n\n\n"
    "def add(a, b):\n"
    "    return a - b\n"
)


def test_a_lone_surrogate_literal_and_a_misnamed_file_still_give_a_report(
    tmp_path: Path,
) -> None:
    repo = small_repo(tmp_path / "repo")
    (repo / "pkg" / "calc.py").write_text(LONE_SURROGATE)
    (repo / "pkg").joinpath(os.fsdecode(b"bad\xffname.py")).write_text("x = 1\n")
    report = tmp_path / "r.md"
    report.write_text("# add subtracts\n\n`add(2, 2)` gives 0, MARK is wrong.\n")
    out, index = tmp_path / "out.json", tmp_path / "index"
    p = cli(
        "run", "--report", str(report), "--repo", str(repo), "--no-model",
        "--json", str(out), env={"FIXBUGS_INDEX_DIR": str(index)},
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Traceback" not in p.stderr + p.stdout
    data = json.loads(out.read_text())
    assert "pkg/calc.py" in {f["path"] for f in data["ranked_files"]}, data["ranked_files"]
    assert any("not valid UTF-8" in n and "bad\\\\xffname.py" in n for n in data["notes"]), data[
        "notes"
    ]
    # the cache kept the file's row, its literal written as an escape
    with sqlite3.connect(index / "index.sqlite") as db:
        facts = [f for (f,) in db.execute("SELECT facts FROM files") if "calc.py" in f]
    assert len(facts) == 1 and "\\\\udcff" in facts[0], facts
