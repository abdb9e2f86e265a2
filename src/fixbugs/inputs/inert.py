"""Strings from the repository, made inert before a person reads them.

The terminal lines of ``fixbugs run``, the markdown report and the eval
tables show strings the repository chose: file names, test output, the
report's title, text a repair template lifted from the sources. A terminal
obeys the escape sequences in them (an OSC 52 write to the clipboard, a
cursor-up and erase-line that hide lines), rich obeys ``[bold red]`` markup,
and markdown obeys newlines, fences, pipes and backticks. These helpers are
the one way such a string is written for a person:

* :func:`strip_controls`: the text minus control characters (newline and tab kept);
* :func:`one_line`: the same, on one line;
* :func:`quote_name`: a file name, quoted when it holds anything not printable;
* :func:`md_text`, :func:`md_code`, :func:`md_fence`: markdown whose
  untrusted parts add no structure (no heading, list, link, cell or fence);
* :func:`terminal`: one line for rich's ``console.print``, markup escaped.

:func:`fixbugs.inputs.textfile.clean_text` cleans a document on the way in;
this module is its counterpart on the way out, for every string, whatever
it came through.
"""

from __future__ import annotations

import re

from rich.markup import escape

from fixbugs.inputs.textfile import clean_text

__all__ = ["md_code", "md_fence", "md_text", "one_line", "quote_name", "strip_controls", "terminal"]

# What clean_text leaves that a terminal or a reader may still obey: the 8-bit
# C1 controls (U+0080-U+009F: CSI, OSC, ST on their own), the bidirectional
# overrides and isolates ("Trojan source": text shown in an order other than
# its own) and the Unicode line and paragraph separators.
_LEFT_OVER = re.compile("[\x80-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_BREAKS = re.compile(r"(?<!\s)\s*[\n\t]\s*")  # from a run's start only: linear on spaces
# Markdown punctuation that makes inline structure anywhere in a line: code
# spans, emphasis, links and images, raw HTML, entities, strikethrough, cells.
_MD_INLINE = re.compile(r"([\\`*_\[\]<>&~|])")
# What opens a block when it starts a line or a list item's text.
_MD_BLOCK_START = re.compile(r"^([#+\-=]|\d{1,9}(?=[.)]))")
_BACKTICKS = re.compile(r"`+")


def strip_controls(text: str) -> str:
    """``text`` without C0/C1 controls, DEL, bidi overrides or escape sequences.

    Newline and tab stay; whole ANSI escape sequences go (an OSC's payload
    with it), CRLF is a line end, a line redrawn with carriage returns keeps
    what a terminal would end up showing, NUL is a line break
    (:func:`~fixbugs.inputs.textfile.clean_text`).
    """
    return _LEFT_OVER.sub("", clean_text(text).text)


def one_line(text: str) -> str:
    """:func:`strip_controls` on one line: each run of line breaks and tabs is one space."""
    return _BREAKS.sub(" ", strip_controls(text)).strip()


def quote_name(name: str) -> str:
    """A file name as shown to a person: itself, or quoted like Python's ``repr``.

    A name with a newline, an escape, a bidi override or any other character
    that is not printable is quoted, so it reads as one name and what it
    holds stays visible (``'a\\nb.py'``) instead of being dropped.
    """
    return name if name.isprintable() else repr(name)


def md_text(text: str, *, starts_line: bool = False) -> str:
    """One line of markdown that reads as ``text`` and makes no structure.

    Inline punctuation is backslash-escaped everywhere. With ``starts_line``
    (the text begins a line or a list item's text, as a note does), what
    would open a block there (``#``, ``-``, ``1.``) is escaped too; in the
    middle of a line those open nothing and stay as they are.
    """
    escaped = _MD_INLINE.sub(r"\\\1", one_line(text))
    return _MD_BLOCK_START.sub(_escape_block_start, escaped) if starts_line else escaped


def md_code(text: str, *, in_table: bool = False) -> str:
    """An inline code span holding ``text`` on one line (a path, a command, a name).

    The delimiter is one backtick longer than any run inside, so no backtick
    of ``text`` ends the span; in a table, pipes are escaped so they do not
    split the cell (GFM reads ``\\|`` as ``|`` even inside a code span).
    """
    body = one_line(text)
    if in_table:
        body = body.replace("|", "\\|")
    tick = "`" * (_longest_backtick_run(body) + 1)
    if body.startswith(("`", " ")) or body.endswith(("`", " ")):
        body = f" {body} "  # markdown drops one space on each side
    return f"{tick}{body}{tick}"


def md_fence(body: str, info: str = "") -> list[str]:
    """The lines of a fenced code block holding ``body``, controls stripped.

    The fence is longer than any run of backticks in ``body``, so no line
    of it (a test's output printing a fence) can close the block.
    """
    text = strip_controls(body).rstrip("\n")
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return [fence + one_line(info).replace("`", ""), text, fence]


def terminal(text: str) -> str:
    """One line for ``console.print``: controls stripped, rich markup escaped."""
    return escape(one_line(text))


def _escape_block_start(m: re.Match[str]) -> str:
    mark = m.group(1)  # "1." is escaped as "1\\.", the others with a leading backslash
    return mark + "\\" if mark[0].isdigit() else "\\" + mark


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(text)), default=0)
