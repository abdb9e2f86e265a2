"""The code a bug report shows, as scripts that can be run: :func:`extract_snippets`.

A user who files a bug often pastes the few lines that show it: a fenced
```` ```python ```` block, an interactive ``>>>``/``...`` session, or a
``python -c '...'`` line, and then what it printed (a traceback, or output
they call wrong). Each becomes a :class:`Snippet`: a script, the kind it came
from, and what the report says it did, so a run of it can be judged
(:mod:`fixbugs.stages.snippet`).

A session becomes a script as the interpreter would run it: each ``>>>``
statement in order, and an expression's value shown with
``sys.displayhook`` (``repr``, ``None`` not shown); the lines between
statements are what the session printed. A script is kept only when it
parses as Python (host-side, :func:`ast.parse`; nothing of it runs here),
is at most :data:`MAX_SCRIPT_CHARS` long and does something (an import or a
call): a pasted traceback, a shell block or a lone ``True`` is no snippet.

Pure functions of text: the report's ANSI codes and control bytes are
removed first (:func:`fixbugs.inputs.textfile.clean_text`), and nothing is
executed.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass, replace
from typing import Literal

from agentrt import parse_python
from fixbugs.inputs import pieces as bounded
from fixbugs.inputs.fences import fenced_blocks, without_fenced
from fixbugs.inputs.textfile import clean_text
from fixbugs.pyenv.raised import final_exception

__all__ = [
    "MAX_SCRIPT_CHARS",
    "MAX_SNIPPETS",
    "Snippet",
    "SnippetKind",
    "extract_snippets",
    "written_snippet",
]

MAX_SCRIPT_CHARS = 12_000  # a longer block is a file pasted whole, not a reproduction
MAX_SNIPPETS = 5
_MAX_TEXT = 1 << 20  # only the report's first MiB is read

# "written": not the report's, a script written for it (a model's), held to what the report shows
SnippetKind = Literal["block", "session", "command", "written"]

_PY_TAGS = frozenset({"python", "py", "python3", "py3", "pycon", "pytb-repl", "ipython"})
_PROMPT = re.compile(r"^(?P<p>>>>|\.\.\.)(?: |$)")
_PY_C = re.compile(
    r"^[ \t]*(?:\$[ \t]*)?(?:\S*/)?python(?:\d+(?:\.\d+)?)?[ \t]+-c[ \t]+(?P<rest>.+)$"
)
_INLINE_C = re.compile(r"`((?:[^\s`/]*+/)*+python(?:\d+(?:\.\d+)?)? -c [^`\n]+)`")
_TRACEBACK = "Traceback (most recent call last):"
_EXPECTED = re.compile(
    r"\b(?:expected|expect(?:ing)?|instead of|wanted|want"
    r"|should(?: only)?(?: have)? (?:be|print|return|give|show|output)\w*)\b"
    r"[^`\n]{0,40}?`(?P<value>[^`\n]{1,200})`",
    re.I,
)
_PROSE_EXC = re.compile(r"\b(?P<type>[A-Za-z_]\w*(?:Error|Exception|Warning|Exit|Interrupt))\b")


@dataclass(frozen=True, slots=True)
class Snippet:
    """One script of the report and what the report says it did.

    ``raises`` is the short type of the exception the report shows it
    raising (``KeyError``), ``message`` that exception's message ("" when
    not shown); ``output`` the output the report shows it printing, the
    output a bug report calls wrong. All three may be unknown: the report
    then says only, in prose, that something is off.
    """

    source: str
    kind: SnippetKind
    raises: str | None = None
    message: str = ""
    output: str | None = None
    # what the report says it should print instead ("I expected `foo`"), when it says so
    expected: str | None = None

    @property
    def expects(self) -> str:
        """What the report says the code did, in one line (for the run's notes)."""
        if self.raises:
            said = f"{self.raises}: {self.message}" if self.message else self.raises
            return f"raises {said[:120]!r}"
        if self.output is not None:
            first = self.output.strip().splitlines()[0] if self.output.strip() else ""
            return f"prints {first[:120]!r}"
        return "fails (the report shows no output)"


@dataclass(frozen=True, slots=True)
class _Block:
    tag: str
    body: str
    start: int


def extract_snippets(text: str) -> tuple[Snippet, ...]:
    """The report's runnable snippets, in the order the report shows them (at most 5)."""
    text = clean_text(text[:_MAX_TEXT]).text.replace("\t", "    ")
    blocks = [
        _Block(f.tag.strip().lower().split()[0] if f.tag.strip() else "", f.body, f.start)
        for f in fenced_blocks(text)
    ]
    found: list[Snippet] = []
    for i, block in enumerate(blocks):
        after = blocks[i + 1] if i + 1 < len(blocks) else None
        found.extend(_from_block(block, after))
    prose = without_fenced(text)
    for m in bounded.finditer(_INLINE_C, prose):
        found.extend(_from_command_line(m.group(1), ""))
    fallback, expected = _report_says(text)
    out: list[Snippet] = []
    for s in found:
        if s.raises is None and s.output is None and fallback is not None:
            s = replace(s, raises=fallback[0], message=fallback[1])
        s = replace(s, expected=expected)
        if s not in out:
            out.append(s)
    return tuple(out[:MAX_SNIPPETS])


def written_snippet(source: str, report_text: str) -> Snippet:
    """A script written for the report (not pasted in it), held to what the report shows:
    the exception of its pasted traceback (else the type it names in prose) and the output
    it says the code should print. What the script itself prints or asserts is no evidence
    of the report's failure, so nothing of the script sets these."""
    text = clean_text(report_text[:_MAX_TEXT]).text.replace("\t", "    ")
    raised, expected = _report_says(text)
    return Snippet(
        source.rstrip() + "\n",
        "written",
        raises=raised[0] if raised else None,
        message=raised[1] if raised else "",
        expected=expected,
    )


def _report_says(text: str) -> tuple[tuple[str, str] | None, str | None]:
    """What the report shows beside any one snippet: the exception it shows raised, and
    the value it says the code should give ("I expected `42`")."""
    wanted = bounded.search(_EXPECTED, without_fenced(text))
    return _report_exception(text), wanted["value"] if wanted else None


def _from_block(block: _Block, after: _Block | None) -> list[Snippet]:
    lines = block.body.splitlines()
    if any(_PROMPT.match(line.lstrip()) for line in lines if line.lstrip().startswith(">>>")):
        session = _from_session(lines)
        return [session] if session is not None else []
    commands = [
        s
        for i, line in enumerate(lines)
        if (m := _PY_C.match(line))
        for s in _from_command_line(m.group(0).strip().lstrip("$").strip(), _shown_after(lines, i))
    ]
    if commands:
        return commands
    if block.tag not in _PY_TAGS and not (block.tag == "" and _imports(block.body)):
        return []
    source = block.body
    if not _runnable(source):
        return []
    raises, message, output = None, "", None
    if after is not None and after.tag not in _PY_TAGS:
        raises, message, output = _shown(after.body)
    return [Snippet(source.rstrip() + "\n", "block", raises, message, output)]


def _shown(text: str) -> tuple[str | None, str, str | None]:
    """(exception type, message, output) of what a block the report pasted shows."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("$ ")]
    body = "\n".join(lines)
    if _TRACEBACK in body or (final_exception(body) is not None and _looks_raised(body)):
        final = final_exception(body)
        if final is not None:
            return _short(final[0]), final[1].strip(), None
    shown = body.strip("\n")
    return None, "", shown if shown.strip() else None


def _looks_raised(body: str) -> bool:
    """A pasted output that is only ``Type: message`` (no traceback), as some users paste."""
    rest = [line for line in body.strip().splitlines() if line.strip()]
    return len(rest) <= 2


def _shown_after(lines: list[str], i: int) -> str:
    """The lines a shell block shows after its line ``i``, up to the next prompt."""
    out: list[str] = []
    for line in lines[i + 1 :]:
        if line.lstrip().startswith("$"):
            break
        out.append(line)
    return "\n".join(out)


def _from_command_line(line: str, shown: str) -> list[Snippet]:
    m = _PY_C.match(line)
    if m is None:
        return []
    try:
        argv = shlex.split(m["rest"])
    except ValueError:
        return []
    if not argv or not _runnable(argv[0]):
        return []
    raises, message, output = _shown(shown) if shown.strip() else (None, "", None)
    return [Snippet(argv[0].rstrip() + "\n", "command", raises, message, output)]


def _from_session(lines: list[str]) -> Snippet | None:
    """A ``>>>`` session as a script, and what it printed: its first traceback, else the
    output of the last statement that printed (see :func:`_session_shown`)."""
    chunks: list[list[str]] = []
    printed: list[list[str]] = []  # the lines each statement printed
    indent = min(len(x) - len(x.lstrip()) for x in lines if x.lstrip().startswith(">>>"))
    for raw in lines:
        line = raw[indent:] if raw[:indent].strip() == "" else raw.lstrip()
        m = _PROMPT.match(line)
        if m and m["p"] == ">>>":
            chunks.append([line[m.end() :]])
            printed.append([])
        elif m and chunks:
            chunks[-1].append(line[m.end() :])
        elif chunks and line.strip():
            printed[-1].append(line.rstrip())
    statements: list[str] = []
    for chunk in chunks:
        src = "\n".join(chunk).rstrip()
        if not src.strip():
            continue
        try:
            tree = parse_python(src)
        except SyntaxError:
            return None
        if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
            statements.append(f"_fixbugs_sys.displayhook(\n{src}\n)")
        else:
            statements.append(src)
    if not statements:
        return None
    source = "import sys as _fixbugs_sys\n" + "\n".join(statements) + "\n"
    if not _runnable(source):
        return None
    raises, message, output = _session_shown(printed)
    return Snippet(source, "session", raises, message, output)


def _session_shown(printed: list[list[str]]) -> tuple[str | None, str, str | None]:
    """What a session shows going wrong: the first statement's traceback, else what its last
    printing statement printed.

    Earlier values of a session set the scene (``scrapy.__version__``, a
    list's length) and differ from machine to machine; a session ends on the
    value its reporter calls wrong, and a traceback ends what the statement
    that raised it shows.
    """
    texts = ["\n".join(group) for group in printed if group]
    raised = next((t for t in texts if _TRACEBACK in t), None)
    if raised is not None:
        return _shown(raised)
    return _shown(texts[-1]) if texts else (None, "", None)


def _runnable(source: str) -> bool:
    """Python that parses, not too long, and does something (an import or a call)."""
    if not source.strip() or len(source) > MAX_SCRIPT_CHARS:
        return False
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(n, (ast.Import, ast.ImportFrom, ast.Call)) for n in ast.walk(tree))


def _imports(source: str) -> bool:
    return bool(re.search(r"^\s*(?:import \w|from [\w.]+ import )", source, re.M))


def _report_exception(text: str) -> tuple[str, str] | None:
    """The exception the report shows elsewhere: its pasted traceback's, else one in prose."""
    for block in reversed(fenced_blocks(text)):
        body = block.body
        if _TRACEBACK in body and (final := final_exception(body)) is not None:
            return _short(final[0]), final[1].strip()
    # in prose only the type is trusted: what follows a colon there is the user's sentence
    m = bounded.search(_PROSE_EXC, without_fenced(text))
    return (m["type"], "") if m is not None and not m["type"].endswith("Warning") else None


def _short(kind: str) -> str:
    return kind.rsplit(".", 1)[-1]
