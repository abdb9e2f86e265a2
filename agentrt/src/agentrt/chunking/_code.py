"""Code chunked at file granularity: chunk for evidence, merge for judgment.

A file is the unit a model can judge on its own (imports, helpers and the
function under suspicion together), so whole files are packed, in order,
into chunks under a token budget. Only a file that alone exceeds the budget
is split, and then at function/class boundaries; a single definition larger
than the budget is the one case split by lines.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from agentrt._pyast import parse_python
from agentrt.chunking._packing import pack_greedy
from agentrt.tokens._counting import estimate_tokens

__all__ = ["CodeChunk", "FilePart", "chunk_code", "definition_starts", "split_file"]

Count = Callable[[str], int]

# a definition in most languages: def/class/function/func/fn/struct… at a line start
_DEF_LINE = re.compile(
    r"^\s*(?:@|(?:export\s+|pub(?:\([^)]*\))?\s+|public\s+|private\s+|protected\s+|static\s+"
    r"|async\s+|abstract\s+|final\s+)*(?:def|class|function|func|fn|struct|impl|interface"
    r"|enum|trait|module|type)\b)"
)


@dataclass(frozen=True, slots=True)
class FilePart:
    """Lines ``start_line``..``end_line`` (1-based, inclusive) of one file."""

    path: str
    start_line: int
    end_line: int
    text: str
    tokens: int
    whole: bool

    def render(self) -> str:
        where = "" if self.whole else f" (lines {self.start_line}-{self.end_line})"
        return f"### {self.path}{where}\n{self.text}"


@dataclass(frozen=True, slots=True)
class CodeChunk:
    parts: tuple[FilePart, ...]
    tokens: int

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.path for p in self.parts))

    def render(self) -> str:
        return "\n\n".join(p.render() for p in self.parts)


def definition_starts(path: str, text: str) -> list[int]:
    """0-based line numbers where a function or class begins (decorators included).

    Python files are parsed; other files (or Python that does not parse) are
    scanned with a language-agnostic pattern.
    """
    if path.endswith(".py"):
        try:
            tree = parse_python(text)
        except (SyntaxError, ValueError):
            pass
        else:
            found: set[int] = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                    found.add(first - 1)
            return sorted(found)
    starts: list[int] = []
    prev_decorator = False
    for i, line in enumerate(text.splitlines()):
        m = _DEF_LINE.match(line)
        if m and not prev_decorator:
            starts.append(i)
        prev_decorator = bool(m) and line.lstrip().startswith("@")
    return starts


def _part(path: str, lines: list[str], a: int, b: int, count: Count, whole: bool) -> FilePart:
    text = "".join(lines[a:b])
    header = count(f"### {path} (lines {a + 1}-{b})\n")
    return FilePart(path, a + 1, b, text, count(text) + header, whole)


def split_file(
    path: str, text: str, budget: int, *, count: Count = estimate_tokens
) -> list[FilePart]:
    """Split one file into parts under ``budget`` at definition boundaries."""
    lines = text.splitlines(keepends=True)
    cuts = sorted({0, *(s for s in definition_starts(path, text) if 0 < s < len(lines))})
    segments = list(zip(cuts, [*cuts[1:], len(lines)], strict=True))
    sizes = [count("".join(lines[a:b])) for a, b in segments]
    header = count(f"### {path} (lines {len(lines)}-{len(lines)})\n")
    parts: list[FilePart] = []
    for group in pack_greedy(sizes, max(1, budget - header)):
        a, b = segments[group.start][0], segments[group.stop - 1][1]
        part = _part(path, lines, a, b, count, False)
        if part.tokens <= budget or b - a == 1:
            parts.append(part)
            continue
        # one definition larger than the budget: the only split by lines
        line_sizes = [count(line) for line in lines[a:b]]
        for sub in pack_greedy(line_sizes, max(1, budget - header)):
            parts.append(_part(path, lines, a + sub.start, a + sub.stop, count, False))
    return parts


def chunk_code(
    files: Mapping[str, str] | Iterable[tuple[str, str]],
    budget: int,
    *,
    count: Count = estimate_tokens,
) -> list[CodeChunk]:
    """Pack whole files, in the given order, into chunks of at most ``budget`` tokens."""
    pairs = files.items() if isinstance(files, Mapping) else files
    parts: list[FilePart] = []
    for path, text in pairs:
        n_lines = max(1, len(text.splitlines()))
        whole = FilePart(path, 1, n_lines, text, count(text) + count(f"### {path}\n"), True)
        parts.extend(
            [whole] if whole.tokens <= budget else split_file(path, text, budget, count=count)
        )
    groups = pack_greedy([p.tokens for p in parts], budget)
    return [
        CodeChunk(tuple(parts[g.start : g.stop]), sum(p.tokens for p in parts[g.start : g.stop]))
        for g in groups
    ]
