"""Signals from what a user's report quotes, matched against the repository.

A report written by a person rarely names the file at fault, but it holds
pieces of the program: the commands they typed, the code lines a pasted
traceback quotes, and the messages the program printed. Each is matched
against something the repository defines:

* **quoted code**: a source line quoted in the report (under a traceback
  frame, or left alone when the trace was cut short) is searched for among
  the repository's lines, so a partial trace still points at its file
  and line;
* **string literals**: fixed fragments of the code's string literals (error
  messages, patterns, environment variable names) that the report contains;
* **typed commands**: the words of a command the user ran, or a command the
  tool printed back, against module names (``git push -u`` → ``git_push.py``;
  CLI tools often name a module after the command or rule it handles); an
  identifier in the report that is a module's name counts too.

Every match is weighted by how few files share it: a line or message that
five modules hold points at none of them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath

from fixbugs.index import as_index, is_test_path
from fixbugs.inputs import pieces as bounded
from fixbugs.localize.evidence import FileEvidence
from fixbugs.localize.report_text import code_lines, command_words, inline_code, typed_commands
from fixbugs.localize.traceback import ParsedFailure

__all__ = ["command_evidence", "literal_evidence", "literal_fragments", "quoted_code_evidence"]

_MAX_SHARED = 5  # a quoted line or fragment held by more files than this points nowhere
# placeholders and regex syntax split a literal into the fixed text a message shows
_SPLIT = re.compile(r"\{[^{}]*\}|%[-+ #0-9.]*[sdrifx]|\\.|[\[\]()|^$*+?{}\\]|\.\*|\.\+")
_IDENT = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_CODE_HINT_PIECE = re.compile(r"[:=\[\](),]")


def _norm(line: str) -> str:
    return bounded.squeeze(line)


def _python_sources(files: Mapping[str, str]) -> dict[str, str]:
    return {p: t for p, t in files.items() if p.endswith(".py") and not is_test_path(p)}


def quoted_code_evidence(
    report: str, files: Mapping[str, str], failure: ParsedFailure | None = None
) -> list[FileEvidence]:
    """Source lines the report quotes, found in the repository (file and line).

    Lines under frames already mapped to a file add nothing new and are
    skipped; the rest (frames of unknown paths, lines left after a cut) are
    looked up exactly, whitespace aside. A piece of code the report writes in
    backticks (``"----": "1"``) is looked up inside the source lines.
    """
    known = {_norm(f.text) for f in (failure.frames if failure else ()) if f.path and f.text}
    wanted = {_norm(ln) for ln in code_lines(report)} - known
    extra = {_norm(f.text) for f in (failure.frames if failure else ()) if not f.path and f.text}
    wanted |= {w for w in extra if len(w) >= 12}
    # a piece of a line in backticks (`"----": "1"`): found inside a source line
    pieces = {_norm(c) for c in inline_code(report) if _is_code_piece(c)} - wanted
    if not wanted and not pieces:
        return []
    where: dict[str, list[tuple[str, int]]] = defaultdict(list)
    # a file can hold a wanted line only if it holds that line's longest word: a
    # substring test skips the line-by-line pass over every other file
    probes = {max(w.split(" "), key=len) for w in wanted} | pieces
    for path, text in files.items():
        if is_test_path(path) or PurePosixPath(path).suffix not in (".py", ".pyx"):
            continue
        if not any(p in text for p in probes):
            continue
        held = [p for p in pieces if p in text]
        for n, line in enumerate(text.splitlines(), 1):
            key = _norm(line)
            if key in wanted:
                where[key].append((path, n))
            for piece in held:
                if piece in key:
                    where[piece].append((path, n))
    per_file: dict[str, list[tuple[float, int, str]]] = defaultdict(list)
    for key, hits in where.items():
        paths = {p for p, _ in hits}
        if len(paths) > _MAX_SHARED:
            continue
        for path, n in hits:
            per_file[path].append((1.0 / len(paths), n, key))

    def say(found: list[tuple[float, int, str]]) -> str:
        _, n, key = found[0]
        return f"line {n} is quoted in the report: {key if len(key) <= 60 else key[:57] + '...'}"

    return _file_evidence(per_file, "quoted", say)


def _is_code_piece(span: str) -> bool:
    """A backticked span that is a piece of code, not a name: long enough, with a
    space and the punctuation of an expression (``"----": "1"``, ``x[0] = y``)."""
    return len(span) >= 8 and _CODE_HINT_PIECE.search(span) is not None and " " in span


def _file_evidence(
    per_file: Mapping[str, list[tuple[float, int, str]]],
    kind: str,
    say: Callable[[list[tuple[float, int, str]]], str],
) -> list[FileEvidence]:
    """One evidence per file from its (weight, line, text) finds: the weights summed (at
    most 1), the lines as its ranges, ``say`` of the finds best first for the reason."""
    out: list[FileEvidence] = []
    for path, found in per_file.items():
        found.sort(key=lambda t: (-t[0], t[1]))
        strength = min(1.0, sum(w for w, _, _ in found))
        lines = tuple(sorted({(ln, ln) for _, ln, _ in found}))
        out.append(FileEvidence(path, kind, strength, say(found), lines))
    return out


def literal_fragments(value: str, *, min_chars: int = 8) -> list[str]:
    """The fixed pieces of a string literal a printed message would show, lower-cased."""
    out = []
    for piece in _SPLIT.split(value):
        frag = _norm(piece).strip(" '\"`:,;").lower()
        if frag.startswith(("http://", "https://")):
            continue  # a link: the project's own site is in its setup and docs, not its bugs
        if len(frag) >= min_chars and (" " in frag or "_" in frag or len(frag) >= 12):
            out.append(frag)
    return out


def literal_evidence(report: str, files: Mapping[str, str]) -> list[FileEvidence]:
    """String literals of the code whose fixed text the report contains."""
    said = _norm(report).lower()
    holders: dict[str, dict[str, int]] = defaultdict(dict)  # fragment -> path -> line
    for entry in as_index(files).entries():
        path = entry.path
        if is_test_path(path):
            continue
        # docstrings are never printed
        for value, line in ((lit.text, lit.line) for lit in entry.literals if not lit.docstring):
            if len(value) < 8 or len(value) > 2000:
                continue
            for frag in literal_fragments(value):
                if frag in said:
                    holders[frag].setdefault(path, line)
    per_file: dict[str, list[tuple[float, int, str]]] = defaultdict(list)
    for frag, paths in holders.items():
        if len(paths) > _MAX_SHARED:
            continue
        weight = min(1.0, len(frag) / 40) / len(paths)
        for path, line in paths.items():
            per_file[path].append((weight, line, frag))

    def say(found: list[tuple[float, int, str]]) -> str:
        shown = ", ".join(repr(f if len(f) <= 40 else f[:37] + "...") for _, _, f in found[:2])
        return f"string {shown} from the report is in this file (line {found[0][1]})"

    return _file_evidence(per_file, "literal", say)


def command_evidence(report: str, files: Mapping[str, str]) -> list[FileEvidence]:
    """Modules named like a command the report shows, or named in it outright.

    A module ``a_b_c`` matches a command when the command's program is one
    of its name's parts and another part is among the command's words (a
    module named just for the program matches too); its score is the share of its parts among the
    command's words, times how much of the command it explains, so
    ``git push -u`` prefers ``git_push`` to ``git`` and to ``git_push_force``.
    Scores are relative: the best match gets 1.
    """
    stems: dict[str, list[str]] = defaultdict(list)
    for path in _python_sources(files):
        stem = PurePosixPath(path).stem
        if stem != "__init__":
            stems[stem].append(path)
    scores: dict[str, tuple[float, str]] = {}
    for cmd in typed_commands(report):
        words = command_words(cmd)
        if not words:
            continue
        wordset = set(words)
        for stem, paths in stems.items():
            parts = stem.lower().split("_")
            if words[0] not in parts:
                continue
            matched = sum(1 for p in parts if p in wordset)
            if matched < min(2, len(parts)):
                continue  # the program alone names only a module called just that
            score = (matched / len(parts)) * (0.5 + 0.5 * min(1.0, matched / len(words)))
            score /= len(paths)
            for path in paths:
                if score > scores.get(path, (0.0, ""))[0]:
                    scores[path] = (score, f"named like the command `{cmd}` in the report")
    for ident in set(bounded.findall(_IDENT, report)):
        for path in stems.get(ident, []):
            scores[path] = (1.0 / len(stems[ident]), f"module {ident} is named in the report")
    if not scores:
        return []
    best = max(s for s, _ in scores.values())
    return [
        FileEvidence(path, "command", s / best, why)
        for path, (s, why) in scores.items()
        if s / best >= 0.3
    ]
