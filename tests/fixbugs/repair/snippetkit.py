"""Snippets for the repair templates' tests: a source file from code, its nodes, checked edits."""

from __future__ import annotations

import ast
import textwrap

from fixbugs.repair.source import SourceFile, parses


def src_of(code: str) -> SourceFile:
    return SourceFile("m.py", textwrap.dedent(code))


def everything(src: SourceFile) -> list[ast.AST]:
    return src.nodes_in(1, len(src.lines))


def new_texts(edits: object) -> list[str]:
    """Each edit's new text; every one must parse (a template never proposes one that does not)."""
    out = [e.new_text for e in edits]  # type: ignore[attr-defined]
    assert all(parses(t) for t in out)
    return out


__all__ = ["everything", "new_texts", "src_of"]
