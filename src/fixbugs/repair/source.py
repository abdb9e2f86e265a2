"""Source-level edits that keep every untouched character as it was.

Templates work on the ``ast`` of a file but never print it back with
``ast.unparse``: an edit replaces the exact character span of one node (or
inserts whole lines), so formatting, comments and quotes outside the span
survive and the diff shows only the repair. Every edit is re-parsed before it
becomes a candidate: a candidate that does not parse never reaches a test.

An edit inside a function is re-parsed as that function alone (thousands of
edits of one large file each cost a whole-file parse otherwise: tornado-5's
fix stage took 84 s on its 1,223-line ``ioloop.py``, 7.5 s after). The function's lines are a
complete block in a file that parsed, so the new file parses when they do
and stay one statement at the same indentation; code that would parse only by
swallowing the lines after the function is no candidate anyway.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from agentrt import parse_python
from fixbugs.index.segments import Segments

__all__ = ["Edit", "SourceFile", "parses"]


@dataclass(frozen=True, slots=True)
class Edit:
    """One proposed rewrite of ``path``: ``new_text`` is the whole new file.

    ``start``..``end`` are the old file's lines the edit touches (1-based);
    ``template`` names the family it came from (its prior is looked up by
    name); ``literals`` are string constants the edit introduces, so ranking
    can flag literals copied from the tests.
    """

    path: str
    start: int
    end: int
    new_text: str
    template: str
    why: str
    literals: tuple[str, ...] = ()
    risk: str = "low"  # "low" | "possible" | "high": negates a whole condition, returns a constant…


def parses(text: str) -> bool:
    try:
        parse_python(text)
    except (SyntaxError, ValueError):
        return False
    return True


class SourceFile(Segments):
    """A file's text, its tree, and character offsets of any node."""

    def __init__(self, path: str, text: str) -> None:
        super().__init__(text)
        self.path = path
        try:
            self.tree: ast.Module | None = parse_python(text)
        except (SyntaxError, ValueError):
            self.tree = None
        self.parents: dict[ast.AST, ast.AST] = {}
        # (first char of the def line, end of its last line) of every function, by start
        self._defs: list[tuple[int, int]] = []
        if self.tree is not None:
            for node in ast.walk(self.tree):
                for child in ast.iter_child_nodes(node):
                    self.parents[child] = node
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    end = node.end_lineno or node.lineno
                    self._defs.append((self._starts[node.lineno - 1], self._starts[end]))
            self._defs.sort()

    def indent_of(self, line: int) -> str:
        raw = self.lines[line - 1]
        return raw[: len(raw) - len(raw.lstrip())]

    # -- edits --------------------------------------------------------------
    def replace(
        self,
        node: ast.AST,
        replacement: str,
        template: str,
        why: str,
        *,
        literals: tuple[str, ...] = (),
        risk: str = "low",
    ) -> Edit | None:
        """Replace the exact source of ``node``; None when nothing changes or it does not parse."""
        sp = self.span(node)
        if sp is None:
            return None
        return self.replace_span(
            sp, node.lineno, node.end_lineno or node.lineno,  # type: ignore[attr-defined]
            replacement, template, why, literals=literals, risk=risk,
        )  # fmt: skip

    def replace_span(
        self,
        sp: tuple[int, int],
        start: int,
        end: int,
        replacement: str,
        template: str,
        why: str,
        *,
        literals: tuple[str, ...] = (),
        risk: str = "low",
    ) -> Edit | None:
        a, b = sp
        if self.text[a:b] == replacement:
            return None
        if not self.parses_with(a, b, replacement):
            return None
        new = self.text[:a] + replacement + self.text[b:]
        return Edit(self.path, start, end, new, template, why, literals, risk)

    def replace_lines(
        self,
        start: int,
        end: int,
        new_lines: str,
        template: str,
        why: str,
        *,
        literals: tuple[str, ...] = (),
        risk: str = "low",
    ) -> Edit | None:
        """Replace whole lines ``start``..``end`` (``end = start - 1`` inserts before ``start``)."""
        if new_lines and not new_lines.endswith("\n"):
            new_lines += "\n"
        new = "".join(self.lines[: start - 1]) + new_lines + "".join(self.lines[end:])
        if new == self.text:
            return None
        a, b = self._starts[start - 1], self._starts[max(start - 1, end)]
        if not self.parses_with(a, b, new_lines):
            return None
        return Edit(self.path, start, max(start, end), new, template, why, literals, risk)

    def parses_with(self, a: int, b: int, replacement: str) -> bool:
        """Whether the file parses with characters ``a``..``b`` replaced (see the module doc)."""
        return self.parses_with_all(((a, b, replacement),))

    def parses_with_all(self, edits: Sequence[tuple[int, int, str]]) -> bool:
        """Whether the file parses with each disjoint span ``a``..``b`` replaced.

        The innermost function holding every span is parsed alone; spans in
        functions apart from each other are each parsed in their own (each
        function stays one statement at its indentation, so the file parses
        when they all do); anything else asks the whole file.
        """
        edits = sorted(edits)
        inner = self._inner_def(edits[0][0], edits[-1][1])
        if inner is not None:
            alone = self._block_parses(inner, edits)
            if alone is not None:
                return alone
        elif len(edits) > 1:
            defs = [d for a, b, _ in edits if (d := self._inner_def(a, b)) is not None]
            if len(defs) == len(edits):
                each = [self._block_parses(d, [e]) for d, e in zip(defs, edits, strict=True)]
                if False in each:
                    return False
                if all(each):
                    return True
        return parses(self._replaced(edits))

    def _replaced(self, edits: Sequence[tuple[int, int, str]], lo: int = 0, hi: int = -1) -> str:
        """The text ``lo``..``hi`` (the whole file by default) with the sorted edits made."""
        hi = len(self.text) if hi < 0 else hi
        out, at = [], lo
        for a, b, replacement in edits:
            out += [self.text[at:a], replacement]
            at = b
        out.append(self.text[at:hi])
        return "".join(out)

    def _inner_def(self, a: int, b: int) -> tuple[int, int] | None:
        """The innermost function whose lines hold ``a``..``b`` (not reaching its end)."""
        i = bisect.bisect_right(self._defs, (a, len(self.text) + 1))
        for ds, de in reversed(self._defs[:i]):
            if b < de:  # an edit reaching the end of the last line may join what follows
                return ds, de  # the last fitting one starts latest: the innermost
        return None

    def _block_parses(
        self, inner: tuple[int, int], edits: Sequence[tuple[int, int, str]]
    ) -> bool | None:
        """Whether the function ``inner`` parses alone with ``edits`` made; None when only
        the whole file can say (an edit reaching into the def line's indentation, or the
        block become several statements)."""
        ds, de = inner
        if not self.text[ds : edits[0][0]].strip():
            return None
        block = self._replaced(edits, ds, de)
        indented = block[:1] in (" ", "\t")
        try:
            tree = parse_python("if True:\n" + block if indented else block)
        except (SyntaxError, ValueError):
            return False
        top = tree.body[0] if len(tree.body) == 1 else None
        if not indented and top is not None:
            return True
        if isinstance(top, ast.If) and len(top.body) == 1 and not top.orelse:
            return True
        # the block became several statements (lines added at the def's own level)
        return None

    # -- queries ------------------------------------------------------------
    def nodes_in(self, lo: int, hi: int) -> list[ast.AST]:
        """Nodes whose lines lie inside ``lo``..``hi``, in source order."""
        if self.tree is None:
            return []
        out = []
        for node in ast.walk(self.tree):
            a = getattr(node, "lineno", None)
            if a is None:
                continue
            b = getattr(node, "end_lineno", a) or a
            if lo <= a and b <= hi:
                out.append(node)
        out.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
        return out

    def statements_touching(self, lo: int, hi: int) -> list[ast.stmt]:
        """Innermost simple statements (and compound headers) that overlap ``lo``..``hi``."""
        if self.tree is None:
            return []
        out: list[ast.stmt] = []
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.stmt):
                continue
            a, b = node.lineno, node.end_lineno or node.lineno
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if b < lo or a > hi:
                continue
            out.append(node)
        out.sort(key=lambda n: (n.lineno, n.col_offset))
        return out

    def enclosing(self, node: ast.AST, kinds: tuple[type, ...]) -> ast.AST | None:
        cur = self.parents.get(node)
        while cur is not None and not isinstance(cur, kinds):
            cur = self.parents.get(cur)
        return cur

    def in_loop(self, node: ast.AST) -> bool:
        cur = self.parents.get(node)
        while cur is not None:
            if isinstance(cur, ast.For | ast.While | ast.AsyncFor):
                return True
            if isinstance(cur, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                return False
            cur = self.parents.get(cur)
        return False
