"""Reports as users paste them: NUL bytes, ANSI colours, progress bars cleaned, not refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixbugs.errors import InputError
from fixbugs.inputs import load_inputs, load_report
from fixbugs.inputs.textfile import clean_text, looks_binary_document

PASTED = (
    b"# find -print0 output breaks the importer\n\n"
    b"```\n$ find . -name '*.py' -print0 | xargs -0 importer\n"
    b"./a.py\x00./b.py\x00\n"
    b"\x1b[31mERROR\x1b[0m importer failed: \x1b[1mbad header\x1b[0m\n"
    b"Downloading  10%\rDownloading  55%\rDownloading 100%\n"
    b"```\n"
)


def test_report_with_nul_ansi_and_progress_is_accepted_with_a_note(tmp_path: Path) -> None:
    p = tmp_path / "bug.md"
    p.write_bytes(PASTED)
    r = load_report(p)
    assert r.title == "find -print0 output breaks the importer"
    assert "\x00" not in r.body and "\x1b" not in r.body and "\r" not in r.body
    assert "./a.py\n./b.py" in r.body  # NUL-delimited items stay apart
    assert "ERROR importer failed: bad header" in r.body
    assert "Downloading 100%" in r.body and "10%" not in r.body
    (note,) = r.notes
    assert "4 ANSI escape sequence(s) removed" in note and "2 NUL byte(s)" in note
    assert "1 carriage-return progress line(s)" in note


def test_the_note_reaches_the_run_notes(tmp_path: Path) -> None:
    p = tmp_path / "bug.md"
    p.write_bytes(PASTED)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "importer.py").write_text("def main():\n    pass\n")
    inputs = load_inputs(p, repo)
    assert any("cleaned terminal output" in n for n in inputs.notes)


def test_clean_report_has_no_note(tmp_path: Path) -> None:
    p = tmp_path / "bug.md"
    p.write_text("# plain\n\nnothing odd here\r\nwindows line ends are not progress bars\r\n")
    r = load_report(p)
    assert r.notes == () and "\r" not in r.body


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n" + b"# not a title\n" * 20,  # a PNG, whatever follows
        b"PK\x03\x04" + b"text" * 50,  # a zip archive
        bytes(range(256)) * 8,  # mostly non-text bytes
        b"\x00\x01\x02\x03" * 500,
    ],
)
def test_truly_binary_files_are_refused(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "bug.md"
    p.write_bytes(data)
    with pytest.raises(InputError, match="is binary") as info:
        load_report(p)
    assert "\n" not in str(info.value)


def test_a_few_nul_bytes_do_not_make_a_document_binary() -> None:
    text = b"line one\x00line two\x00" + b"ordinary text " * 40
    assert not looks_binary_document(text)


def test_clean_text_applies_backspace_overstrike_and_osc() -> None:
    cleaned = clean_text("\x1b]0;title\x07ab\bc tab\tkept\x07")
    assert cleaned.text == "ac tab\tkept"
    assert cleaned.ansi == 1 and cleaned.controls == 1


def test_github_json_with_escaped_colours_is_cleaned(tmp_path: Path) -> None:
    p = tmp_path / "issue.json"
    p.write_text('{"title": "Crash", "body": "\\u001b[31mTraceback\\u001b[0m here"}')
    r = load_report(p)
    assert r.body == "Traceback here"
