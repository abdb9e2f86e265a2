"""Property-based tests of every reader of untrusted input (issue 41, item 6).

Each property runs a reader on generated hostile input (deep nesting, long
lines, unclosed fences, huge numbers, invalid UTF-8 and lone surrogates,
NULs, control characters; in archives: links, ``..`` and absolute member
names) and checks what the reader promises whatever it is given:

- it raises nothing but its documented one-line error
  (:class:`~fixbugs.errors.InputError` and its kinds; a JSON reader's
  :class:`json.JSONDecodeError`, which its callers turn into one);
- what it returns is bounded by its input (no more snippets than fences,
  no text longer than the text read);
- it is deterministic (the same input twice, the same answer).

Examples stay small (the linear-time guard is ``test_linear_parsing.py``;
``fixbugs bench hostile`` measures the slopes), so the file runs in seconds.
It caught a real fault: a GitHub issue whose title holds the JSON escape of
a lone surrogate failed the service's isolated read with a RuntimeError
(``test_a_github_issue_reads_the_same_isolated``).
"""

from __future__ import annotations

import io
import json
import tarfile
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Literal

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fixbugs.errors import InputError
from fixbugs.inputs.boundedjson import MAX_DEPTH, JsonLimit, loads
from fixbugs.inputs.bug_report import load_report
from fixbugs.inputs.bundle import read_texts
from fixbugs.inputs.fences import fenced_blocks, without_fenced
from fixbugs.inputs.isolated import _answer, _answered, _Read
from fixbugs.inputs.logs import iter_log_records, parse_line
from fixbugs.inputs.pieces import pieces, squeeze
from fixbugs.inputs.snippets import MAX_SNIPPETS, extract_snippets
from fixbugs.inputs.traces import load_traces
from fixbugs.localize.traceback import parse_failure
from fixbugs.pyenv.raised import final_exception
from fixbugs.pyenv.testoutput import failure_excerpt, failures, parse_outcomes
from fixbugs.pyenv.testverdict import classify_run
from fixbugs.service.job_files import Workspace

FAST = settings(max_examples=60, deadline=None, database=None)
# a property that writes files gets a folder of its own per example
FILES = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

# -- generators ---------------------------------------------------------------

# the pieces hostile text is made of: markup the parsers look for, in runs
_UNITS = [
    "```",
    "```py\n",
    "~~~python\n",
    "`",
    ">>> ",
    "... ",
    "$ ",
    "E   ",
    "Error",
    "Error: ",
    "Traceback (most recent call last):\n",
    '  File "pkg/a.py", line 3, in f\n',
    "pkg/a.py:12: in f\n",
    "tests/test_a.py::test_x FAILED\n",
    "assert 1 == 2\n",
    "python -c ",
    "# ",
    "_" * 5,
    "=" * 5,
    "\n",
    " ",
    "\t",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ".",
    "/",
    "..",
    "9" * 30,
    "a_b",
    "CamelCase",
    "\0",
    "\x1b[31m",
    "\r",
    "\b",
    "\x7f",
    "\ud800",
    "\udfff",
    "\ufeff",
    "https://h/o/r/blob/x/a.py#L3",
]


@st.composite
def hostile_text(draw: st.DrawFn, max_units: int = 60) -> str:
    """Text made of markup units, runs of one unit, and any characters at all."""
    parts = draw(
        st.lists(
            st.one_of(
                st.sampled_from(_UNITS),
                st.builds(lambda u, n: u * n, st.sampled_from(_UNITS), st.integers(2, 400)),
                st.text(max_size=40),
            ),
            max_size=max_units,
        )
    )
    return "".join(parts)


def _bytes_of(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


hostile_bytes = st.one_of(
    hostile_text().map(_bytes_of),
    st.binary(max_size=400),
    st.builds(lambda t, b: _bytes_of(t) + b, hostile_text(), st.binary(max_size=40)),
)


def _nested(depth: int, leaf: object) -> object:
    out = leaf
    for i in range(depth):
        out = [out] if i % 2 else {"k": out}
    return out


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        hostile_text(8),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(hostile_text(4), inner, max_size=4)
    ),
    max_leaves=12,
)
# JSON texts: generated documents, very deep ones, huge numbers, broken ones
json_texts = st.one_of(
    json_values.map(json.dumps),
    st.builds(
        lambda d, leaf: json.dumps(_nested(d, leaf)), st.integers(0, 3 * MAX_DEPTH), json_values
    ),
    st.builds(lambda n: "[" * n + "]" * n, st.integers(0, 5000)),
    st.builds(lambda n, e: "9" * n + e, st.integers(1, 400), st.sampled_from(["", "e999", ".5"])),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "[1e400]", '{"a": -1e999}']),
    hostile_text(20),
)

# -- report, snippets, fences -------------------------------------------------


@FILES
@given(data=hostile_bytes, suffix=st.sampled_from([".md", ".txt", ".json", ""]))
@example(data=b'{"title": "a\\ud800b", "body": "x"}', suffix=".json")
def test_a_report_is_read_or_refused_in_one_line(tmp_path: Path, data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as d:
        path = Path(d) / f"report{suffix}"
        path.write_bytes(data)
        try:
            first = load_report(path)
        except InputError as e:
            assert "\n" not in str(e)
            return
        assert load_report(path) == first
        # JSON's str() of a non-string title may be a little longer than its text
        said = len(first.title) + len(first.body) + sum(len(c) for c in first.comments)
        assert said <= 2 * len(data) + 16


@FILES
@given(issue=st.dictionaries(st.sampled_from(["title", "body", "comments"]), json_values))
@example(issue={"title": "a\ud800b", "body": "\udfff"})
def test_a_github_issue_reads_the_same_isolated(tmp_path: Path, issue: dict[str, object]) -> None:
    """The service's read hands the texts back as JSON (another process: here its answer,
    in this one; test_isolated_read.py starts it): they come back as read."""
    with tempfile.TemporaryDirectory(dir=tmp_path) as d:
        path = Path(d) / "issue.json"
        path.write_text(json.dumps(issue))
        try:
            texts = read_texts(path)
        except InputError as e:
            assert "\n" not in str(e)
            return
        assert _answered(_answer(_Read(texts=texts))).texts == texts


@FAST
@given(text=hostile_text())
def test_fenced_blocks_are_bounded_by_the_fences(text: str) -> None:
    blocks = fenced_blocks(text)
    fence_lines = sum(1 for ln in text.splitlines() if ln.lstrip().startswith(("```", "~~~")))
    assert len(blocks) <= fence_lines
    for b in blocks:
        assert len(b.body) <= len(text) and 0 <= b.start <= b.end <= len(text)
    assert len(without_fenced(text)) <= len(text)
    assert fenced_blocks(text) == blocks


@FAST
@given(text=hostile_text())
@example(text="```py\n" * 300)
@example(text="`python -c 'import pkg'` " * 50)
def test_snippets_are_bounded_by_the_fences_and_the_text(text: str) -> None:
    snippets = extract_snippets(text)
    assert len(snippets) <= MAX_SNIPPETS
    assert len(snippets) <= text.count("`") + text.count("~")
    for s in snippets:
        assert len(s.source) <= len(text)
    assert extract_snippets(text) == snippets


@FAST
@given(text=hostile_text(), width=st.integers(1, 200))
def test_pieces_put_together_are_the_text(text: str, width: int) -> None:
    got = list(pieces(text, width))
    assert "".join(got) == text
    assert all(len(p) <= width for p in got) and all(got[:-1])
    assert squeeze(text) == " ".join(text.split())


# -- bounded JSON, traces, logs -----------------------------------------------


@FAST
@given(text=json_texts)
@example(text="[" * 100_000 + "]" * 100_000)
def test_bounded_json_raises_only_its_limit_or_a_decode_error(text: str) -> None:
    try:
        value = loads(text, "the document")
    except JsonLimit as e:
        assert "\n" not in str(e) and str(e).startswith("the document ")
        return
    except json.JSONDecodeError:
        return
    assert loads(text, "the document") == value


@FILES
@given(text=json_texts, resource=st.booleans())
def test_a_trace_file_is_read_or_refused_in_one_line(
    tmp_path: Path, text: str, resource: bool
) -> None:
    if resource:  # an OTLP shape around the generated value, so the span reader runs
        text = '{"resourceSpans": [{"scopeSpans": [{"spans": [' + text + "]}]}]}"
    with tempfile.TemporaryDirectory(dir=tmp_path) as d:
        path = Path(d) / "t.json"
        path.write_bytes(_bytes_of(text))
        try:
            traces = load_traces(path)
        except InputError as e:
            assert "\n" not in str(e)
            return
        assert sum(len(t.spans) for t in traces) <= text.count("{")
        assert load_traces(path) == traces


@FAST
@given(line=hostile_text(20))
@example(line='{"level": "error", "msg": ' + "[" * 5000 + "]" * 5000 + "}")
@example(line="ts=" + "9" * 5000 + " level=error msg=x")
def test_a_log_line_parses_to_what_it_holds(line: str) -> None:
    rec = parse_line(line, line_no=1, byte_offset=0)
    assert rec.raw == line
    for field in (rec.message, rec.service, rec.trace_id, rec.span_id, rec.level):
        assert field is None or len(str(field)) <= len(line) + 16
    assert parse_line(line, line_no=1, byte_offset=0) == rec


@FILES
@given(data=hostile_bytes)
def test_a_log_file_streams_or_is_refused_in_one_line(tmp_path: Path, data: bytes) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as d:
        path = Path(d) / "app.log"
        path.write_bytes(data)
        try:
            records = list(iter_log_records(path))
        except InputError as e:
            assert "\n" not in str(e)
            return
        assert len(records) <= data.count(b"\n") + data.count(b"\r") + 1
        assert all(r.byte_offset <= len(data) for r in records)


# -- traces in a report, test output -------------------------------------------


@FAST
@given(text=hostile_text())
def test_a_pasted_traceback_parses_to_what_it_shows(text: str) -> None:
    files = ["pkg/a.py", "tests/test_a.py"]
    failure = parse_failure(text, files)
    lines = len(text.splitlines())
    assert sum(len(tb) for tb in failure.tracebacks) <= lines
    assert all(len(t) <= len(text) for t in failure.failing_tests)
    assert parse_failure(text, files) == failure


@FAST
@given(
    output=hostile_text(), runner=st.sampled_from(["pytest", "unittest"]), code=st.integers(-9, 5)
)
def test_test_output_parses_to_what_it_shows(output: str, runner: str, code: int) -> None:
    outcomes = parse_outcomes(output)
    assert all(test in output for test in outcomes)
    sections = failures(runner, output)  # type: ignore[arg-type]
    assert all(len(s.text) <= len(output) for s in sections)
    assert len(failure_excerpt(runner, output)) <= max(len(output), 8000) + 200  # type: ignore[arg-type]
    final = final_exception(output)
    assert final is None or len(final[0]) + len(final[1]) <= len(output)
    verdict = classify_run(runner, code, output)  # type: ignore[arg-type]
    assert verdict.status in ("passed", "failed", "could_not_run")
    assert classify_run(runner, code, output) == verdict  # type: ignore[arg-type]
    assert parse_outcomes(output) == outcomes


# -- archives -----------------------------------------------------------------

_NAMES = st.one_of(
    st.sampled_from(
        [
            "repo/a.py",
            "../escape.py",
            "repo/../../escape.py",
            "/etc/passwd-copy",
            "/tmp/abs.py",
            "repo/./b.py",
            "repo//c.py",
            "repo/\0nul.py",
            "repo/" + "n" * 300,
            "repo/" + "d/" * 200 + "deep.py",
            "C:\\win.py",
            "repo\\..\\..\\back.py",
            "",
            ".",
            "repo/\ud800.py",
        ]
    ),
    st.text(min_size=1, max_size=30),
)
_KINDS = st.sampled_from(["file", "dir", "symlink", "hardlink", "fifo"])
_TARGETS = st.sampled_from(["/etc/passwd", "../../outside", "repo/a.py", "/", "x" * 200])


def _tar(members: list[tuple[str, str, str, bytes]], compression: str) -> bytes:
    buf = io.BytesIO()
    mode: Literal["w:gz", "w:"] = "w:gz" if compression else "w:"
    with tarfile.open(fileobj=buf, mode=mode, format=tarfile.GNU_FORMAT) as tar:
        for name, kind, target, data in members:
            info = tarfile.TarInfo(name.encode("utf-8", "replace").decode("utf-8"))
            info.type = {
                "file": tarfile.REGTYPE,
                "dir": tarfile.DIRTYPE,
                "symlink": tarfile.SYMTYPE,
                "hardlink": tarfile.LNKTYPE,
                "fifo": tarfile.FIFOTYPE,
            }[kind]
            info.linkname = target
            info.size = len(data) if kind == "file" else 0
            tar.addfile(info, io.BytesIO(data) if kind == "file" else None)
    return buf.getvalue()


def _zip(members: list[tuple[str, str, str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buf, "w") as zf:
        warnings.simplefilter("ignore")  # a duplicate name is one of the hostile shapes
        for name, kind, target, data in members:
            info = zipfile.ZipInfo(name.encode("utf-8", "replace").decode("utf-8") or "x")
            if kind == "symlink":
                info.external_attr = 0o120777 << 16
                data = target.encode()
            elif kind == "dir":
                info.filename = info.filename.rstrip("/") + "/"
            zf.writestr(info, data)
    return buf.getvalue()


_MEMBERS = st.lists(
    st.tuples(_NAMES, _KINDS, _TARGETS, st.binary(max_size=64)), min_size=1, max_size=6
)


def _outside(root: Path) -> list[Path]:
    """What exists beside the workspace: nothing an archive may write."""
    return sorted(p for p in root.iterdir() if p.name != "ws")


def _check_unpacked(ws: Workspace, root: Path, job: str, name: str, blob: bytes) -> None:
    before = _outside(root)
    try:
        top = ws.unpack(job, name, io.BytesIO(blob))
    except InputError as e:
        assert "\n" not in str(e)
    else:
        assert top.is_relative_to(ws.job_dir(job))
    assert _outside(root) == before
    for p in ws.job_dir(job).rglob("*"):
        assert not p.is_symlink() and (p.is_file() or p.is_dir()), p


@FILES
@given(members=_MEMBERS, compression=st.sampled_from(["", "gz"]))
@example(members=[("../escape.py", "file", "", b"x")], compression="gz")
@example(members=[("repo/link", "symlink", "/etc/passwd", b"")], compression="")
@example(members=[("repo/\ud800.py", "file", "", b"x")], compression="")
def test_a_tar_upload_unpacks_inside_its_job_or_is_refused(
    tmp_path: Path, members: list[tuple[str, str, str, bytes]], compression: str
) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as d:
        root = Path(d)
        ws = Workspace(root / "ws")
        ws.create("job")
        _check_unpacked(
            ws, root, "job", f"r.tar{'.gz' if compression else ''}", _tar(members, compression)
        )


@FILES
@given(members=_MEMBERS)
@example(members=[("/tmp/abs.py", "file", "", b"x")])
@example(members=[("repo/link", "symlink", "../../outside", b"")])
def test_a_zip_upload_unpacks_inside_its_job_or_is_refused(
    tmp_path: Path, members: list[tuple[str, str, str, bytes]]
) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as d:
        root = Path(d)
        ws = Workspace(root / "ws")
        ws.create("job")
        _check_unpacked(ws, root, "job", "r.zip", _zip(members))


@FILES
@given(blob=st.binary(max_size=2048), name=st.sampled_from(["r.tar", "r.tar.gz", "r.tgz", "r.zip"]))
@example(blob=b"\x1f\x8b" + b"\0" * 100, name="r.tar.gz")
@example(blob=b"PK\x05\x06" + b"\xff" * 18, name="r.zip")
def test_archive_bytes_of_any_kind_are_refused_in_one_line(
    tmp_path: Path, blob: bytes, name: str
) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as d:
        root = Path(d)
        ws = Workspace(root / "ws")
        ws.create("job")
        _check_unpacked(ws, root, "job", name, blob)
