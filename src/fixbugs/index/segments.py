"""Character offsets of a file's lines, and the exact source text of an ``ast`` node.

``ast`` gives a node's column as a UTF-8 byte offset; an edit or a copied
snippet needs the characters. One conversion, used by the index (which
keeps snippets of the repository's code) and by repair's
:class:`~fixbugs.repair.source.SourceFile` (which edits them), so a
snippet read from the cache is the text a fresh parse would cut.
"""

from __future__ import annotations

import ast

__all__ = ["Segments"]


class Segments:
    """A text's lines (``str.splitlines`` with their ends) and where each starts."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self._starts = [0]
        for line in self.lines:
            self._starts.append(self._starts[-1] + len(line))

    @property
    def line_starts(self) -> list[int]:
        """Where each line starts, and the text's end last (read it, never change it)."""
        return self._starts

    def offset(self, line: int, byte_col: int) -> int:
        raw = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        col = len(raw.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))
        return self._starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int] | None:
        end_line = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        if end_line is None or end_col is None:
            return None
        return self.offset(node.lineno, node.col_offset), self.offset(end_line, end_col)  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        sp = self.span(node)
        return "" if sp is None else self.text[sp[0] : sp[1]]
