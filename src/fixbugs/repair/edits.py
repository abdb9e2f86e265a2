"""Edits a strong model writes: search/replace blocks, unified diffs, whole-function rewrites.

A model that fixes bugs well writes its change in one of three forms, and
each has one strict parser here. The answer is text we did not write: a
form that is not exactly as specified (a block left open, a diff whose
hunk counts lie, a path that leaves the repository) is refused with the
reason, never guessed at. Parsed edits are typed (:class:`SearchReplace`,
:class:`UnifiedDiff`, :class:`FunctionRewrite`); :func:`apply_edits` turns
them into the project's one patch representation, a unified diff made by
:func:`fixbugs.diffs.make_diff` from each file's old and new text, which
validation applies like any candidate's. An edit that does not apply (search
text not found or found twice, a diff whose context does not match, a
function not found, a result that does not parse) raises
:class:`EditRejected` with the reason, which the fix stage records.

:func:`render_edits` writes edits in the same forms, so the parser's
specification and its writer stay one (the oracle model and the tests use it).
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from agentrt import parse_python
from fixbugs.diffs import (
    apply_to_text,
    diff_hunks,
    file_header,
    hunk_header,
    make_diff,
    split_lines,
)
from fixbugs.localize.regions import function_spans
from fixbugs.repair.source import parses

__all__ = [
    "EDIT_FORMATS",
    "AppliedEdits",
    "EditFormat",
    "EditRejected",
    "FileChange",
    "FunctionRewrite",
    "ModelEdit",
    "ParsedEdits",
    "SearchReplace",
    "UnifiedDiff",
    "apply_edits",
    "parse_edits",
    "render_edits",
    "safe_path",
]

EditFormat = Literal["search_replace", "unified_diff", "function"]

_SEARCH, _DIVIDE, _REPLACE = "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"
_FUNCTION, _END = "<<<<<<< FUNCTION ", ">>>>>>> END"
_FENCE = re.compile(r"^```[\w+-]*\s*$")
_QUALNAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_MAX_ANSWER = 200_000  # characters: a rewrite is a few functions, not a repository

EDIT_FORMATS = f"""\
Write the change in exactly one of these three forms (paths relative to the repository root):

1. Search/replace blocks, one or more; SEARCH must match the file's current lines exactly
   (indentation included) and occur once:
path/to/file.py
{_SEARCH}
the current lines
{_DIVIDE}
the new lines
{_REPLACE}

2. A unified diff (git style, a/ and b/ prefixes, correct hunk line counts):
--- a/path/to/file.py
+++ b/path/to/file.py
@@ -10,3 +10,3 @@
 context
-old line
+new line

3. Whole-function rewrites, one per function (Class.method for a method):
{_FUNCTION}path/to/file.py::function_name
def function_name(...):
    the whole new function
{_END}

Several blocks, hunks or files may be given, all in one form. Nothing else is read."""


class EditRejected(ValueError):
    """An answer or edit refused; ``str(exc)`` is the one-line reason."""


@dataclass(frozen=True, slots=True)
class SearchReplace:
    """Replace the one occurrence of ``search`` in ``path`` with ``replace``."""

    path: str
    search: str
    replace: str


@dataclass(frozen=True, slots=True)
class UnifiedDiff:
    """One file's part of a unified diff: its ``---``/``+++`` headers and its hunks."""

    path: str
    diff: str


@dataclass(frozen=True, slots=True)
class FunctionRewrite:
    """The function (or method, ``Class.method``) ``qualname`` of ``path``, rewritten whole."""

    path: str
    qualname: str
    new_source: str


ModelEdit = SearchReplace | UnifiedDiff | FunctionRewrite


@dataclass(frozen=True, slots=True)
class ParsedEdits:
    format: EditFormat
    edits: tuple[ModelEdit, ...]


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's old and new text; ``start``..``end`` the old lines the change touches."""

    path: str
    old: str
    new: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class AppliedEdits:
    """Edits applied in memory: every changed file, and their joint unified diff."""

    format: EditFormat
    files: tuple[FileChange, ...]
    diff: str

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)


def safe_path(raw: str) -> str:
    """``raw`` as a clean repository-relative POSIX path; :class:`EditRejected` if it is not one.

    Absolute paths, ``..``, backslashes, control characters and ``.git``
    are refused here; whether the file exists (as a regular file of the
    repository's listing, never through a link) is the reader's to say.
    """
    p = raw.strip()
    if p.startswith("./"):
        p = p[2:]
    shown = p[:80].encode("unicode_escape").decode("ascii")
    if not p or any(ord(ch) < 32 or ch == "\x7f" for ch in p):
        raise EditRejected(f"bad path {shown!r}")
    if p.startswith("/") or re.match(r"^[A-Za-z]:", p) or "\\" in p:
        raise EditRejected(f"path {shown!r} is not relative to the repository")
    parts = PurePosixPath(p).parts
    if ".." in parts or "." in parts or ".git" in parts or "//" in p:
        raise EditRejected(f"path {shown!r} leaves the repository or names .git")
    return p


# -- parsing ---------------------------------------------------------------------------


def parse_edits(answer: str) -> ParsedEdits:
    """The edits of a model's answer, in the one form it uses; :class:`EditRejected` if none."""
    if len(answer) > _MAX_ANSWER:
        raise EditRejected(f"the answer is longer than {_MAX_ANSWER} characters")
    lines = split_lines(answer)  # at newlines only: a form feed stays in its line
    bare = [ln.rstrip("\r\n") for ln in lines]
    forms: list[EditFormat] = []
    if any(b.rstrip() == _SEARCH for b in bare):
        forms.append("search_replace")
    if any(b.startswith(_FUNCTION) for b in bare):
        forms.append("function")
    if any(b.startswith("--- ") for b in bare) and any(b.startswith("+++ ") for b in bare):
        forms.append("unified_diff")
    if not forms:
        raise EditRejected("the answer holds no edit in a known form")
    if len(forms) > 1:
        raise EditRejected(f"the answer mixes edit forms ({', '.join(forms)})")
    form = forms[0]
    if form == "search_replace":
        edits: tuple[ModelEdit, ...] = tuple(_search_replace(lines))
    elif form == "function":
        edits = tuple(_functions(lines))
    else:
        edits = tuple(_unified(lines))
    return ParsedEdits(form, edits)


def _is_fence(line: str) -> bool:
    return _FENCE.match(line.strip()) is not None


def _search_replace(lines: list[str]) -> list[SearchReplace]:
    out: list[SearchReplace] = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip() != _SEARCH:
            if lines[i].rstrip() in (_DIVIDE, _REPLACE):
                raise EditRejected(f"line {i + 1}: {lines[i].strip()!r} outside a block")
            i += 1
            continue
        n = len(out) + 1
        j = i - 1
        while j >= 0 and _is_fence(lines[j]):
            j -= 1  # a code fence may sit between the path and its block
        if j < 0 or not lines[j].strip() or lines[j].rstrip() in (_REPLACE, _DIVIDE):
            raise EditRejected(f"search/replace block {n} names no file on the line before it")
        path = safe_path(lines[j].strip().strip("`"))
        k = i + 1
        search: list[str] = []
        while k < len(lines) and lines[k].rstrip() != _DIVIDE:
            if lines[k].rstrip() in (_SEARCH, _REPLACE):
                raise EditRejected(f"search/replace block {n} has no {_DIVIDE!r} line")
            search.append(lines[k])
            k += 1
        k += 1
        replace: list[str] = []
        while k < len(lines) and lines[k].rstrip() != _REPLACE:
            if lines[k].rstrip() in (_SEARCH, _DIVIDE):
                raise EditRejected(f"search/replace block {n} is not closed by {_REPLACE!r}")
            replace.append(lines[k])
            k += 1
        if k >= len(lines):
            raise EditRejected(f"search/replace block {n} is not closed by {_REPLACE!r}")
        if not "".join(search).strip():
            raise EditRejected(f"search/replace block {n} has an empty SEARCH (no new files)")
        out.append(SearchReplace(path, _with_newline(search), _with_newline(replace)))
        i = k + 1
    return out


def _with_newline(lines: list[str]) -> str:
    text = "".join(lines)
    return text if not text or text.endswith("\n") else text + "\n"


def _functions(lines: list[str]) -> list[FunctionRewrite]:
    out: list[FunctionRewrite] = []
    i = 0
    while i < len(lines):
        head = lines[i].rstrip("\r\n")
        if not head.startswith(_FUNCTION):
            if head.rstrip() == _END:
                raise EditRejected(f"line {i + 1}: {_END!r} outside a function block")
            i += 1
            continue
        n = len(out) + 1
        where = head[len(_FUNCTION) :].strip()
        path, sep, qualname = where.rpartition("::")
        if not sep or not _QUALNAME.match(qualname):
            raise EditRejected(f"function block {n}: {where[:80]!r} is not path::qualname")
        path = safe_path(path)
        k = i + 1
        body: list[str] = []
        while k < len(lines) and lines[k].rstrip() != _END:
            if lines[k].startswith(_FUNCTION):
                raise EditRejected(f"function block {n} is not closed by {_END!r}")
            body.append(lines[k])
            k += 1
        if k >= len(lines):
            raise EditRejected(f"function block {n} is not closed by {_END!r}")
        while body and _is_fence(body[0]):
            body.pop(0)
        while body and _is_fence(body[-1]):
            body.pop()
        out.append(FunctionRewrite(path, qualname, _with_newline(body)))
        i = k + 1
    return out


def _unified(lines: list[str]) -> list[UnifiedDiff]:
    """Each file's section of the diff; text outside the diff (fences, prose) is left out."""
    out: list[UnifiedDiff] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("--- "):
            i += 1
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
            raise EditRejected(f"line {i + 1}: a '---' header without its '+++' line")
        old, new = file_header(lines[i]) or "", file_header(lines[i + 1]) or ""
        if old == "/dev/null":
            raise EditRejected(f"the diff creates {new[:80]!r}: new files are not supported")
        if new == "/dev/null":
            raise EditRejected(f"the diff deletes {old[:80]!r}: deleting files is not supported")
        if old != new:
            raise EditRejected(f"the diff renames {old[:80]!r} to {new[:80]!r}")
        path = safe_path(new)
        section = lines[i : i + 2]
        k = i + 2
        if k >= len(lines) or not lines[k].startswith("@@"):
            raise EditRejected(f"the diff of {path} has no hunk")
        while k < len(lines) and lines[k].startswith("@@"):
            k = _hunk(lines, k, path, section)
        if k < len(lines) and lines[k][:1] in ("+", "-", " ") and not lines[k].startswith("--- "):
            raise EditRejected(f"the diff of {path}: a hunk is longer than its header says")
        out.append(UnifiedDiff(path, "".join(section)))
        i = k
    return out


def _hunk(lines: list[str], k: int, path: str, section: list[str]) -> int:
    """Append the hunk at ``lines[k]`` to ``section``; the index after it. Counts must hold."""
    head = hunk_header(lines[k])
    if head is None:
        raise EditRejected(f"the diff of {path}: bad hunk header {lines[k].strip()[:60]!r}")
    old_n, new_n = head.old_count, head.new_count
    section.append(lines[k])
    k += 1
    while old_n > 0 or new_n > 0:
        if k >= len(lines):
            raise EditRejected(f"the diff of {path}: a hunk is shorter than its header says")
        line = lines[k]
        tag = line[:1]
        if line in ("\n", "\r\n"):
            tag, line = " ", " " + line  # a blank context line that lost its space
        if tag not in (" ", "-", "+"):
            raise EditRejected(f"the diff of {path}: a hunk is shorter than its header says")
        old_n -= tag != "+"
        new_n -= tag != "-"
        if old_n < 0 or new_n < 0:
            raise EditRejected(f"the diff of {path}: a hunk is longer than its header says")
        section.append(line)
        k += 1
        if k < len(lines) and lines[k].startswith("\\"):
            section.append(lines[k])  # "\ No newline at end of file"
            k += 1
    return k


# -- applying --------------------------------------------------------------------------


def apply_edits(
    parsed: ParsedEdits, read: Callable[[str], str | None], *, context: int = 3
) -> AppliedEdits:
    """Apply ``parsed`` in memory to the files ``read`` gives (None: not a repository file).

    Edits of one file apply in order, each to the text the ones before it
    left. Every changed file must still parse as Python when it is ``.py``.
    """
    olds: dict[str, str] = {}
    texts: dict[str, str] = {}
    for e in parsed.edits:
        if e.path not in texts:
            text = read(e.path)
            if text is None:
                raise EditRejected(f"{e.path} is not a file of the repository")
            olds[e.path] = texts[e.path] = text
        texts[e.path] = _apply_one(e, texts[e.path])
    changes: list[FileChange] = []
    for path, new in texts.items():
        old = olds[path]
        if new == old:
            continue
        if path.endswith(".py"):
            try:
                parse_python(new)
            except (SyntaxError, ValueError) as exc:
                line = getattr(exc, "lineno", None)
                at = f" (line {line})" if line else ""
                raise EditRejected(f"the edited {path} does not parse{at}") from None
        hunks = diff_hunks(make_diff(path, old, new, context=0))
        lo = min(min(h.start, h.end) for h in hunks)
        hi = max(max(h.start, h.end) for h in hunks)
        changes.append(FileChange(path, old, new, lo, hi))
    if not changes:
        raise EditRejected("the edit changes nothing")
    diff = "".join(make_diff(c.path, c.old, c.new, context) for c in changes)
    return AppliedEdits(parsed.format, tuple(changes), diff)


def _apply_one(e: ModelEdit, text: str) -> str:
    if isinstance(e, SearchReplace):
        n = text.count(e.search)
        if n == 0:
            raise EditRejected(f"{e.path}: the SEARCH text is not in the file")
        if n > 1:
            raise EditRejected(f"{e.path}: the SEARCH text is ambiguous (found {n} times)")
        return text.replace(e.search, e.replace, 1)
    if isinstance(e, UnifiedDiff):
        new = apply_to_text(text, e.diff, e.path)
        if new is None:
            raise EditRejected(f"{e.path}: the diff's context does not match the file")
        return new
    return _rewrite_function(e, text)


def _rewrite_function(e: FunctionRewrite, text: str) -> str:
    if not parses(text):
        raise EditRejected(f"{e.path} does not parse; no function can be found in it")
    # the names a root-cause region gives its function (Class.method, outer.inner)
    found = [(first, last) for q, first, last in function_spans(text) if q == e.qualname]
    if not found:
        raise EditRejected(f"{e.path}: no function {e.qualname}")
    if len(found) > 1:
        raise EditRejected(f"{e.path}: {e.qualname} is defined {len(found)} times (ambiguous)")
    (first_line, last_line) = found[0]
    new = textwrap.dedent(e.new_source)
    try:
        mod = parse_python(new)
    except (SyntaxError, ValueError):
        raise EditRejected(f"the rewrite of {e.qualname} does not parse") from None
    body = mod.body
    name = e.qualname.rsplit(".", 1)[-1]
    if not (
        len(body) == 1
        and isinstance(body[0], ast.FunctionDef | ast.AsyncFunctionDef)
        and body[0].name == name
    ):
        raise EditRejected(f"the rewrite of {e.qualname} is not one definition of {name}")
    lines = split_lines(text)
    name_at = re.compile(rf"\s*(async\s+)?def\s+{re.escape(name)}\b")
    def_line = next(
        (n for n in range(first_line, last_line + 1) if name_at.match(lines[n - 1])), first_line
    )
    # a rewrite with decorators replaces the old ones too; one without keeps them
    first = first_line if body[0].decorator_list else def_line
    indent = re.match(r"[ \t]*", lines[def_line - 1])
    assert indent is not None
    new_lines = [indent.group(0) + ln if ln.strip() else ln for ln in split_lines(new)]
    return "".join(lines[: first - 1]) + _with_newline(new_lines) + "".join(lines[last_line:])


# -- writing ---------------------------------------------------------------------------


def render_edits(edits: Sequence[ModelEdit]) -> str:
    """``edits`` written in the forms :func:`parse_edits` reads (all of one form)."""
    out: list[str] = []
    for e in edits:
        if isinstance(e, SearchReplace):
            out.append(f"{e.path}\n{_SEARCH}\n{e.search}{_DIVIDE}\n{e.replace}{_REPLACE}\n")
        elif isinstance(e, UnifiedDiff):
            out.append(e.diff)
        else:
            out.append(
                f"{_FUNCTION}{e.path}::{e.qualname}\n{_with_newline([e.new_source])}{_END}\n"
            )
    return "".join(out)
