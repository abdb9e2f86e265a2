"""The Python a report shows, as statements to read (never to run): :func:`report_statements`.

Issues paste code in many shapes: a ```` ```python ```` block, a ``>>>``
session, an IPython session (``In [3]: ds.copy(deep=True)``), a line in
backticks (```Permutation._af_new```), and mixed with it what the code
printed. :func:`fixbugs.inputs.snippets.extract_snippets` keeps only whole
scripts that parse, for running them; localization wants every statement
it can read, so this reader is tolerant: prompts are stripped, and each
block is read as the longest runs of lines that parse, so one line of
output or a pasted traceback in a block loses that line, not the block.
A line over 4096 characters is read as a gap: a report's code has none,
and parsing it would hold the GIL for as long as it is.

Pure: a string in, :mod:`ast` statements out, in the report's order.
"""

from __future__ import annotations

import ast
import re
import warnings

from agentrt import parse_python
from fixbugs.localize.report_text import code_blocks, inline_code

__all__ = ["report_statements"]

# ">>> ", "... ", "In [3]: ", "   ...: " — the prompts a session shows before code
_PROMPT = re.compile(r"^\s*(?:>>>|\.\.\.|In \[\d*\]:|\.\.\.+:)(?: |$)")
_OUT = re.compile(r"^\s*Out\[\d*\]:")
_MAX_STATEMENT_LINES = 25  # a statement spread over more lines is not worth the search
_MAX_BLOCK_LINES = 400
# a line longer than this is no statement worth reading (and one ast.parse of it holds
# the GIL throughout, stalling the service's loop): it is a gap, like output
_MAX_LINE_CHARS = 4096


def _parse(source: str) -> list[ast.stmt] | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return parse_python(source).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def _code_lines(block: str) -> list[str]:
    """The block's lines with session prompts removed; a session's output lines go.

    In a block with prompts, only prompted lines (and their continuations) are code.
    """
    lines = block.splitlines()[:_MAX_BLOCK_LINES]
    prompted = any(_PROMPT.match(ln) for ln in lines)
    out: list[str] = []
    for ln in lines:
        m = _PROMPT.match(ln)
        if len(ln) > _MAX_LINE_CHARS:
            out.append("")
        elif m:
            out.append(ln[m.end() :])
        elif not prompted and not _OUT.match(ln):
            out.append(ln)
        else:
            out.append("")  # output of the session: a gap, so runs never span it
    return out


def _runs(lines: list[str]) -> list[ast.stmt]:
    """Statements of the longest runs of ``lines`` that parse, first line first."""
    whole = _parse("\n".join(lines))
    if whole is not None:
        return whole
    out: list[ast.stmt] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip() or lines[i].startswith((" ", "\t")):
            i += 1  # a run starts at a line of its own, never inside an indented body
            continue
        best: tuple[int, list[ast.stmt]] | None = None
        # grow the run while it parses; a statement spans at most _MAX_STATEMENT_LINES
        j, misses = i + 1, 0
        while j <= len(lines) and misses < _MAX_STATEMENT_LINES:
            body = _parse("\n".join(lines[i:j]))
            if body is not None:
                best, misses = (j, body), 0
            else:
                misses += 1
            j += 1
        if best is None:
            i += 1
            continue
        out.extend(best[1])
        i = best[0]
    return out


def report_statements(report: str) -> list[ast.stmt]:
    """Every statement of the report's code blocks and inline code, in order."""
    out: list[ast.stmt] = []
    for block in code_blocks(report):
        out.extend(_runs(_code_lines(block)))
    for span in inline_code(report):
        if len(span) > _MAX_LINE_CHARS:
            continue
        body = _parse(span.strip())
        if body is not None:
            out.extend(body)
    return out
