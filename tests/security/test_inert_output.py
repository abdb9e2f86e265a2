"""What a person reads is inert: the repository's strings drive no terminal and no markdown.

Issue 21, item 4: file names, test output and the report's title are the
attacker's. Seen before the fix: the terminal output and the markdown
report carried an OSC 52 clipboard write and a cursor-up and erase-line
that hide lines, rich rendered ``[bold red]`` in the title, a newline in a
file name added ``## Patch`` headings, and a fence line in test output
swallowed the later sections. Item 8: a validated fix passed the
repository's own tests, and the report must say so.

The markdown is checked by parsing it (markdown-it, what rich renders
with): a hostile report must have exactly the block structure of a clean
one. The terminal is checked byte for byte: no ESC, no 8-bit control, no
bidi override, markup shown as text.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from hostile import NEEDS_NAMESPACES, write_repo
from markdown_it import MarkdownIt
from rich.console import Console
from rich.markdown import Markdown

from agentrt.cli import run_app
from fixbugs import cli
from fixbugs.errors import InputError
from fixbugs.run.progress import (
    NO_DATA,
    CandidateData,
    EventData,
    EventKind,
    HypothesisData,
    JudgmentData,
    ProgressEvent,
    RankedFileData,
    RankedFilesData,
    ValidatedData,
)
from fixbugs.run.report import RunReport
from fixbugs.run.report_schema import report_json_schema

OSC52 = "\x1b]52;c;aGk=\x07"  # writes "hi" to the clipboard
HIDE = "\x1b[1A\x1b[2K"  # cursor up, erase the line
OSC52_8BIT = "\x9d52;c;aGk=\x9c"  # the same OSC with C1 controls
BIDI = "\u202ecod.exe"  # right-to-left override
MARKUP = "[red]PWNED[/red]"
FORGED = "\n## Patch\n\n```\n- forged\n"  # a heading, a fence and a list item
# What a reader must never receive from the repository.
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def taint(text: str) -> str:
    return f"{text} {OSC52}{HIDE}{OSC52_8BIT}{BIDI} {MARKUP} | `x` [l](javascript:x) <b>{FORGED}"


SECTIONS = ("Verdict", "Repair", "Root cause", "Ranked files")
STAGE_FIGURES = ("wall_s", "output_tokens", "model_attempts", "tool_calls", "failures")
EVIL_NAME = "pkg/evil\x1b[2K\n## Patch\n.py"
EVIL_OUTPUT = "collected 0 items\n```\n## Patch\n``````\n~~~\n" + OSC52 + "end of output"


def _report(evil: bool) -> dict[str, Any]:
    """A report whose every string from the repository is ``taint``ed when ``evil``."""
    t = taint if evil else (lambda s: s)
    name = EVIL_NAME if evil else "pkg/calc.py"
    diff = f"--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n-x = 1\n+x = 2  # {t('c')}\n"
    return {
        "title": t("add returns the difference"),
        "ranked_files": [{"path": name, "score": 0.9, "reasons": [t("BM25"), t("traceback")]}],
        "root_cause": {
            "path": name,
            "function": t("add"),
            "lines": [1, 2],
            "explanation": t("subtracts"),
            "origin": "static",
        },
        "suspicious_regions": [
            {"path": name, "function": t("add"), "lines": [1, 2], "score": 0.5, "reasons": [t("r")]}
        ],
        "patch": diff,
        "validated": True,
        "validation": {"summary": t("1 test passes"), "tried": 1},
        "reproduction": {
            "command": t("python -m pytest"),
            "origin": "given",
            "confirmed": False,
            "summary": t("collection error"),
            "status": "could_not_run",
            "output_tail": EVIL_OUTPUT if evil else "collected 0 items\nend of output",
        },
        "environment": {
            "python": t("/repo/.venv/bin/python"),
            "version": t("3.11"),
            "source": t("repository venv"),
            "pytest": t("8.0"),
        },
        "repair": {
            "candidates": 1,
            "rejected_by_stage": {},
            "outcomes_by_status": {"validated": 1},
            "budget_spent": False,
            "outcomes": [],
            "wall_s": 1.0,
            "first_validated_s": 1.0,
            "validated": [
                {
                    "id": 0,
                    "path": name,
                    "lines": [1, 1],
                    "template": t("literal"),
                    "why": t("drop the literal"),
                    "score": 1.0,
                    "suspiciousness": 1.0,
                    "prior": 1.0,
                    "naturalness": 1.0,
                    "diff_lines": 2,
                    "overfit_risk": "low",  # one of three words of ours: nothing to taint
                    "shape": None,
                    "shape_reason": None,
                    "validated": True,
                    "seconds": 1.0,
                    "found_at_s": 1.0,
                    "diff": diff,
                }
            ],
        },
        "first_hypothesis_s": 0.1,
        "total_s": 1.0,
        "stages": {"analysis": dict.fromkeys(STAGE_FIGURES, 0) | {"ttft_s": None}},
        "notes": [t("a note"), t("# a heading"), t("1. a list")],
    }


def _parse(markdown: str) -> list[Any]:
    return MarkdownIt().enable("strikethrough").enable("table").parse(markdown)


def _structure(markdown: str) -> list[tuple[str, ...]]:
    """The block tokens, and each inline's non-text tokens (links, code, emphasis)."""
    out: list[tuple[str, ...]] = []
    for tok in _parse(markdown):
        if tok.type == "inline":
            out.append(("inline", *(c.type for c in tok.children or () if c.type != "text")))
        else:
            out.append((tok.type, tok.tag, tok.info))
    return out


def _headings(markdown: str) -> list[str]:
    toks = _parse(markdown)
    return [toks[i + 1].content for i, t in enumerate(toks) if t.type == "heading_open"]


def _fences(markdown: str) -> list[str]:
    return [t.content for t in _parse(markdown) if t.type == "fence"]


def test_a_hostile_report_has_the_structure_of_a_clean_one() -> None:
    clean = RunReport.from_dict(_report(evil=False))
    evil = RunReport.from_dict(_report(evil=True))
    # from_dict validated it: the hostile report is a valid report, the real renderer's input
    md = evil.markdown()
    assert not CONTROLS.search(md), repr(CONTROLS.findall(md))
    # the same headings, lists, tables, cells, fences, links and code spans as the clean report
    assert _structure(md) == _structure(clean.markdown())
    assert _headings(md)[1:] == [*SECTIONS, "Reproduction", "Patch", "Stages", "Notes"]
    # the test output's fence lines stay inside its block, and so does the diff's
    tail = next(f for f in _fences(md) if "end of output" in f)
    assert "```\n## Patch\n``````\n~~~\n" in tail
    # a file name with a newline reads as one quoted name
    assert repr(EVIL_NAME) in md
    # rendered by rich, markup reads as text and no escape reaches the terminal
    buf = io.StringIO()
    Console(file=buf, width=400).print(Markdown(md))
    shown = buf.getvalue()
    assert "\x1b" not in shown and MARKUP in shown and "\u202e" not in shown


def test_a_validated_report_says_its_oracle_is_the_repositorys_own_tests() -> None:
    report = RunReport.from_dict(_report(evil=False))
    verdict = report.markdown().split("## Verdict", 1)[1].split("\n## ", 1)[0]
    assert "package's tests that passed still pass" in verdict
    assert "FixBugs does not judge the repository's tests" in verdict
    assert "hostile suite can still pass a wrong patch" in verdict
    assert json.loads(report.to_json())["validation"]["oracle"] == "repository_tests"
    schema = report_json_schema()["$defs"]["ValidationItem"]["properties"]["oracle"]
    assert "the repository's own, which FixBugs does not judge" in schema["description"]
    unvalidated = RunReport.from_dict({**_report(evil=False), "validated": False, "patch": None})
    assert "can still pass a wrong patch" not in unvalidated.markdown()


def _event(kind: EventKind, message: str, data: EventData = NO_DATA) -> ProgressEvent:
    return ProgressEvent(kind, "analysis", 1.0, message, data)


def test_progress_lines_show_the_repositorys_strings_as_text(monkeypatch) -> None:
    monkeypatch.setattr(cli.console, "width", 400)
    evil = taint("message") + " :warning:"
    name = "pkg/evil\x1b[2K\n##Patch.py"
    events = [
        _event("hypothesis", evil, HypothesisData(name, (evil,))),
        _event("ranked_files", evil, RankedFilesData((RankedFileData(name, 0.5, (evil,)),))),
        _event("validated", evil, ValidatedData(evil, "low")),
        _event("candidate", evil, CandidateData(evil, "swallows")),
        _event("note", evil),
        _event("judgment", "", JudgmentData(delta=f"judged {OSC52}{HIDE}{MARKUP}")),
        _event("judgment", "", JudgmentData(done=True)),
    ]
    with cli.console.capture() as cap:
        for ev in events:
            cli.render_event(ev)
    out = cap.get()
    assert not CONTROLS.search(out.replace("\n", "")), repr(CONTROLS.findall(out))
    # one line per event (two for the ranked files), none forged by a newline
    assert len(out.splitlines()) == 7, out
    assert out.count(MARKUP) == 7 and ":warning:" in out
    assert repr(name) in out


def test_an_error_naming_a_hostile_string_is_one_inert_line(capsys) -> None:
    app = typer.Typer()

    @app.command()
    def fail() -> None:
        raise InputError(f"cannot read {taint('name')} :warning:")

    with pytest.raises(SystemExit) as exit_:
        run_app(app, [])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u202e" not in err and "\x9d" not in err
    assert len(err.strip().splitlines()) == 1
    assert MARKUP in err and ":warning:" in err and "\\x1b]52" in err


REPORT = "# add is wrong {title}\n\nadd(1, 2) in pkg/calc.py returns -1 instead of 3\n"
BAD_ADD = "def add(a, b):\n    return a - b\n"
# a test module that prints escapes and fences, then fails to import (could not run)
FENCES = "```\n## Patch\n``````"
LOUD_TEST = f"""
import sys
print({OSC52 + HIDE + " hidden"!r})
print({FENCES!r}, file=sys.stderr)
raise RuntimeError({"boom " + MARKUP!r})
"""
FIXBUGS = [sys.executable, "-c", "from fixbugs.cli import main; main()"]
QUIET_TEST = 'raise RuntimeError("boom")\n'


def _fixbugs_run(tmp: Path, title: str, files: dict[str, str]) -> tuple[str, str, dict[str, Any]]:
    repo = write_repo(tmp / "repo", {"pkg/__init__.py": "", "pkg/calc.py": BAD_ADD, **files})
    report = tmp / "report.md"
    report.write_text(REPORT.format(title=title))
    out_md, out_json = tmp / "out.md", tmp / "out.json"
    argv = [*FIXBUGS, "run", "--no-model", "--report", str(report), "--repo", str(repo)]
    argv += ["--python", sys.executable, "--test", "python -m pytest -q -s test_attack.py"]
    argv += ["--markdown", str(out_md), "--json", str(out_json)]
    env = {**os.environ, "COLUMNS": "400"}  # no wrapping: a line is one event
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    return (
        p.stdout + p.stderr,
        (tmp / "out.md").read_text(),
        json.loads((tmp / "out.json").read_text()),
    )


@NEEDS_NAMESPACES
def test_fixbugs_run_on_a_hostile_repository_prints_no_escape(tmp_path: Path) -> None:
    (tmp_path / "clean").mkdir()
    (tmp_path / "evil").mkdir()
    _, clean_md, _ = _fixbugs_run(tmp_path / "clean", "", {"test_attack.py": QUIET_TEST})
    name = "pkg/evil\x1b[2K\nname.py"
    terminal, md, data = _fixbugs_run(
        tmp_path / "evil",
        OSC52 + OSC52_8BIT + BIDI + " " + MARKUP,
        {"test_attack.py": LOUD_TEST, name: BAD_ADD},
    )
    assert name in [f["path"] for f in data["ranked_files"]], "the hostile name is not reported"
    for text in (terminal, md):
        assert not CONTROLS.search(text.replace("\n", "")), repr(CONTROLS.findall(text))
        assert MARKUP in text and repr(name) in text
    # exactly the headings of the clean run; the test's fence did not end its block
    assert _headings(md)[1:] == _headings(clean_md)[1:]
    assert "Stages" in _headings(md)
    assert any(FENCES in f for f in _fences(md))
    assert data["validation"]["oracle"] == "repository_tests"
