"""What a user's report holds besides prose: code blocks, inline code, typed commands.

Users paste terminal sessions (``$ git push -u`` then what the tool
printed), tracebacks, and put commands in backticks. These helpers pull
those pieces out of markdown or plain text so the localization signals can
match them against the repository: commands against module names, code
lines against source lines, messages against string literals. Pure
functions over a string.
"""

from __future__ import annotations

import re

from fixbugs.inputs import pieces as bounded
from fixbugs.pyenv.testrun import parse_test_command

__all__ = [
    "code_blocks",
    "code_lines",
    "code_words",
    "command_words",
    "evidence_text",
    "inline_code",
    "typed_commands",
    "without_environment",
    "without_warning_entries",
]

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
# possessive: the user@host:dir part cannot be split two ways (quadratic on a long word)
_PROMPT = re.compile(r"^\s*+(?:[\w.@-]++[:~\w/.-]*+)?[$%❯»]\s+(?P<cmd>\S.*)$")
_PROGRAM = re.compile(r"^[a-z][a-z0-9_.+-]*$")
_CODE_HINT = re.compile(r"[()=\[\].]")
# possessive and bounded (a path is at most 4096 characters): one line, read once
_FRAME = re.compile(r'^\s*+File "|^\s*+Traceback \(|^[\w./-]{1,4096}\.py:\d')
_CHAIN = re.compile(r"&&|\|\||;|\|")  # the pieces are stripped: no \s* to rescan
_TOKEN = re.compile(r"[a-z0-9]+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHAPED = re.compile(r"^[A-Za-z][a-z0-9]+[A-Z]")  # camelCase / CamelCase
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\(")
# pytest's warnings summary: an entry is one or more "where" lines (a relative path and
# line, or a test id), then the warning itself, indented, then its source line(s)
_WARNING_WHERE = re.compile(r"^[^\s:]+\.py(?::\d+|::\S+)$")
_WARNING_SAID = re.compile(r"^\s+\S+:\d+: (?:\w+\.)*\w*Warning: ")
_WARNING_FRAME = re.compile(r"^=+ warnings summary =+$|^-- Docs: https://docs\.pytest\.org/\S*$")
# a section of the report that lists the user's machine: its heading, alone on its line
# (markdown heading, bold line or an HTML summary), names the environment or the
# versions printout that issue templates ask for
_ENV_HEAD = re.compile(
    r"^\s*+(?:#+\s*|\*\*|<details>\s*)?(?:<summary>\s*)?"
    r"(?:environment(?:\s+info(?:rmation)?)?|versions?|output of .*versions.*"
    r"|installed versions)\s*:?\s*(?:\*\*|</summary>)?\s*:?\s*$",
    re.I,
)
_SECTION_HEAD = re.compile(r"^\s*+(?:#+\s+\S|\*\*[^*]+\*\*\s*:?\s*$|</details>)")


def code_blocks(text: str) -> list[str]:
    """Bodies of fenced code blocks; an unclosed fence runs to the end."""
    blocks: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if _FENCE.match(line):
            if current is None:
                current = []
            else:
                blocks.append("\n".join(current))
                current = None
            continue
        if current is not None:
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def inline_code(text: str) -> list[str]:
    """Backticked spans outside fenced blocks."""
    outside: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            outside.append(line)
    prose = "\n".join(outside)
    return [m.group(1).strip() for m in bounded.finditer(_INLINE, prose) if m.group(1).strip()]


def _split_chain(command: str) -> list[str]:
    return [c.strip() for c in _CHAIN.split(command) if c.strip()]


def _program(command: str) -> str | None:
    first = command.split(maxsplit=1)[0] if command.split() else ""
    name = first.rsplit("/", 1)[-1].lower()
    return name if _PROGRAM.match(name) else None


def code_words(text: str) -> set[str]:
    """Identifiers the report writes as code: in code blocks or backticks, or shaped
    like code anywhere (``snake_case``, ``CamelCase``, ``call(``).
    Plain prose words ("my value") are not among them."""
    coded = "\n".join([*code_blocks(text), *inline_code(text)])
    out = set(bounded.findall(_IDENT, coded))
    out |= {w for w in bounded.findall(_IDENT, text) if "_" in w.strip("_") or _SHAPED.match(w)}
    out |= {m.group(1) for m in bounded.finditer(_CALL, text)}
    return out


def typed_commands(text: str) -> list[str]:
    """Shell commands the report shows being run, or names as commands.

    Prompt lines in code blocks (``$ git push -u``), backticked spans of a
    program and its arguments, and code-block lines that start with a
    program seen in either of those (a tool printing a suggested command).
    Chains (``a && b``) are split into their commands.
    """
    prompted: list[str] = []
    blocks = code_blocks(text)
    for block in blocks:
        for line in block.splitlines():
            m = _PROMPT.match(line)
            if m:
                prompted += _split_chain(m["cmd"])
    spans = [c for s in inline_code(text) for c in _split_chain(s) if _program(c)]
    programs = {p for p in map(_program, [*prompted, *spans]) if p}
    spans = [c for c in spans if len(c.split()) > 1]  # a lone `word` is a name, not a run
    echoed: list[str] = []
    for block in blocks:
        for line in block.splitlines():
            if _PROMPT.match(line) or _FRAME.match(line):
                continue
            for c in _split_chain(line.strip()):
                if _program(c) in programs:
                    echoed.append(c)
    return list(dict.fromkeys([*prompted, *spans, *echoed]))


def command_words(command: str) -> list[str]:
    """The program (base name) and the lower-case words of its arguments, options
    without their dashes (``git push --force-with-lease`` → git, push, force, with, lease)."""
    argv = parse_test_command(command).argv  # the one reading of a command line
    if not argv:
        return []
    prog = argv[0].rsplit("/", 1)[-1].lower()
    words = [prog]
    for arg in argv[1:]:
        words += _TOKEN.findall(arg.lower())
    return words


def code_lines(text: str, *, min_chars: int = 12) -> list[str]:
    """Lines of pasted code: from code blocks, the ones that look like source.

    A traceback quotes the source line under each frame and pytest marks the
    failing line with ``>``; a person cutting a trace keeps such lines, or quotes
    one behind a comment marker (``//  hit = kern in s``). Prompt
    lines, frame headers and short or prose-like lines are left out.
    """
    out: list[str] = []
    for block in code_blocks(text) or [text]:
        for raw in block.splitlines():
            if _PROMPT.match(raw) or _FRAME.match(raw):
                continue
            line = raw.strip()
            if line.startswith((">", "//")):  # pytest's failing line; a line quoted as a comment
                line = line.lstrip(">/").strip()
            elif not raw.startswith((" ", "\t")):
                continue  # code in pasted output is indented under its frame
            if len(line) < min_chars or not _CODE_HINT.search(line) or line.startswith("E "):
                continue
            out.append(line)
    return list(dict.fromkeys(out))


def without_warning_entries(text: str) -> str:
    """``text`` without the entries of a pytest warnings summary, header or not.

    A test run's output lists every warning the import of the package raised
    (youtube-dl's: 35 entries, one per extractor with an invalid escape), each
    with its file, line and source line. None of that is about the bug, yet
    as text it names files, quotes their code and shows their literals, which
    is what the report's own words are weighed by. The entry's shape is
    pytest's alone (a ``path.py:N`` line, then the indented ``…:N: XWarning:``
    line), so it is recognized where a pasted output lost the section's
    header; a warning printed by Python itself (no "where" line before it)
    is kept, since a report may be about that warning.
    """
    lines = text.splitlines()
    drop: set[int] = set()
    for i, line in enumerate(lines):
        if _WARNING_FRAME.match(line.strip()):
            drop.add(i)
        if not (i and _WARNING_SAID.match(line) and _WARNING_WHERE.match(lines[i - 1])):
            continue
        start = i - 1
        while start and _WARNING_WHERE.match(lines[start - 1]):
            start -= 1
        end = i + 1
        while end < len(lines) and lines[end][:1].isspace() and lines[end].strip():
            end += 1
        drop.update(range(start, end))
    if not drop:
        return text
    return "\n".join(line for i, line in enumerate(lines) if i not in drop)


def without_environment(text: str) -> str:
    """``text`` without the sections that list the user's machine.

    Issue templates ask for the OS, the Python and package versions and the
    extensions in use ("Environment info", "Output of xr.show_versions()");
    users paste them whole. They name modules (``sphinx.ext.autodoc``,
    ``sphinx.ext.napoleon``) and print strings the project's version report
    holds, so as evidence they rank the version-printing module and every
    listed extension above the code the bug is in. A section runs from its
    heading to the next heading, bold line or ``</details>``.
    """
    lines = text.splitlines()
    out: list[str] = []
    skipping = False
    for line in lines:
        if _ENV_HEAD.match(line):
            skipping = True
            continue
        if skipping and _SECTION_HEAD.match(line):
            skipping = False
        if not skipping:
            out.append(line)
    return "\n".join(out) if len(out) != len(lines) else text


def evidence_text(text: str) -> str:
    """What of a report the localization signals weigh: all of it but the pytest warning
    entries (:func:`without_warning_entries`) and the environment listing
    (:func:`without_environment`)."""
    return without_environment(without_warning_entries(text))
