"""Code a judge names outside the listed regions, held to what the file says.

A judge trusted high (:class:`fixbugs.run.context.Models`) may put the
root cause in a region the evidence did not list, if it quotes that code.
Its answer's first line names a file of the repository, and may name the
function (``function f``, ``def f``, ``f()``) or a line (``line 12``);
the quoted lines are those starting with ``>`` or inside a ``` fence (a
``NNN |`` line number, as the prompt's excerpts print them, is dropped).
Only when the answer has neither do its inline code spans count, and then
only those that are a whole line of the file: an inline span may be a
mere name, so one that matches no line is no quote.

Every quoted line must be a line of that file, compared stripped and
exactly (inside the named function, when one is named); the region then
becomes the function around them, shaped as every region is
(:func:`fixbugs.localize.regions.region_at`). A file the repository does
not have, a test file, a function the file does not define, a quote that
is not in the file: no region, and the reason in one line.

Pure: the answer and a ``path → text`` mapping in, a region or a reason out.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from fixbugs.index import is_test_path
from fixbugs.localize.regions import Region, function_spans, region_at

__all__ = ["NamedCode", "ground_named_code", "read_named_code"]

# each from the start of its run of name characters only: linear on one long run
_PATH = re.compile(r"(?<![\w./\\-])[\w./\\-]+\.\w+")
_FUNCTION = re.compile(
    r"\b(?:function|def|method)\s+`?([A-Za-z_][\w.]*)"
    r"|`?(?<![\w.])(?:[^\W_A-Za-z]|\.)*+([A-Za-z_][\w.]*+)\(\)"
)
_LINE = re.compile(r"\blines?\s+(\d{1,6})\b")
_NUMBERED = re.compile(r"^\s*\d{1,6}\s*\|\s?")
_INLINE = re.compile(r"`([^`\n]+)`")
_FENCE = "```"


@dataclass(frozen=True, slots=True)
class NamedCode:
    """What an answer's first line names and what it quotes (see the module's doc)."""

    path: str | None  # a file of the repository, as the first line names it
    function: str | None
    line: int | None  # a line number the first line gives, to place a repeated quote
    quoted: tuple[str, ...]  # quoted lines, stripped
    inline: tuple[str, ...]  # inline code spans (quotes only when nothing else is quoted)
    explanation: str  # the answer's prose, quotes left out


def _clean(line: str) -> str:
    return _NUMBERED.sub("", line, count=1).strip()


def read_named_code(answer: str, paths: Collection[str]) -> NamedCode:
    """The named file (one of ``paths``), function, line, quotes and prose of ``answer``."""
    head, _, body = answer.strip().partition("\n")
    path = None
    for token in _PATH.findall(head):
        token = token.strip("`'\".,:;()").removeprefix("./")
        if token in paths:
            path = token
            break
    fn = _FUNCTION.search(head)
    line = _LINE.search(head)
    quoted: list[str] = []
    prose: list[str] = []
    fenced = False
    for raw in body.splitlines():
        if raw.strip().startswith(_FENCE):
            fenced = not fenced
            continue
        if fenced or raw.lstrip().startswith(">"):
            text = _clean(raw.lstrip().removeprefix(">") if not fenced else raw)
            if text and text != "...":
                quoted.append(text)
        else:
            prose.append(raw)
    raw = "\n".join(prose)
    return NamedCode(
        path,
        (fn.group(1) or fn.group(2)) if fn else None,
        int(line.group(1)) if line else None,
        tuple(quoted),
        # from the text as written: white space inside a span (a string's) must match too
        tuple(s.strip() for s in _INLINE.findall(raw) if s.strip()),
        " ".join(raw.split()),
    )


def _placed(positions: Sequence[Sequence[int]], hint: int | None) -> list[int]:
    """One line number per quoted line: the occurrences closest together (and to ``hint``)."""

    def spread(anchor: int) -> int:
        near = hint if hint is not None else anchor
        return abs(anchor - near) + sum(min(abs(p - anchor) for p in ps) for ps in positions)

    anchor = min(positions[0], key=spread)
    return sorted({min(ps, key=lambda p: abs(p - anchor)) for ps in positions})


def ground_named_code(
    named: NamedCode, files: Mapping[str, str]
) -> tuple[Region | None, str | None]:
    """(region, None) when ``named`` is grounded in ``files``; (None, why) when it is not."""
    if named.path is None:
        return None, "the judgment named no listed evidence region and no file of the repository"
    path = named.path
    if is_test_path(path):
        return None, f"the judgment named the test file {path} as the root cause"
    lines = files[path].splitlines()
    lo, hi = 1, len(lines)
    where = path
    if named.function is not None:
        spans = [
            s
            for s in function_spans(files[path])
            if s[0] == named.function or s[0].endswith("." + named.function)
        ]
        if not spans:
            return None, f"the judgment named function {named.function}, which {path} lacks"
        _, lo, hi = spans[0]
        where = f"function {named.function} of {path}"
    index: dict[str, list[int]] = {}
    for n in range(lo, hi + 1):
        index.setdefault(lines[n - 1].strip(), []).append(n)
    quotes = list(named.quoted)
    if not quotes:  # inline spans, only those that are whole lines of the code
        quotes = [s for s in named.inline if s in index]
    if not quotes:
        return None, f"the judgment named {where} but quoted none of its code"
    missing = next((q for q in quotes if q not in index), None)
    if missing is not None:
        return None, f"the judgment quoted a line that is not in {where} ({missing[:60]!r})"
    placed = _placed([index[q] for q in quotes], named.line)
    at = ", ".join(str(n) for n in placed[:6])
    reasons = (f"not listed: named by the judge, which quoted line(s) {at} of {path}",)
    return region_at(path, files[path], placed, reasons), None
