"""Python source to :mod:`ast` trees, one thread at a time: :func:`parse_python`.

CPython 3.11.7 (this project's CI), like every release before the fix of
gh-106905, keeps the depth counter of its C-to-Python tree conversion in
per-interpreter state shared by every thread. Two threads converting at
once (two bugs' stages parsing in ``asyncio.to_thread`` workers, one
suspended mid-way while a garbage collection runs a finalizer) can leave it
unbalanced, and ``ast.parse`` then raises ``SystemError: AST constructor
recursion depth mismatch``: a stage of one bug failed at random because
another bug was being parsed. Every parse of this process goes through one
lock here; parsing is CPU work under the GIL, so the lock only keeps a
conversion from starting while another is suspended.

The lock cannot hold parses it does not see: the standard library's own
(3.11's ``traceback`` parses a source line to place its ``^^^`` marks in
whichever thread formats an exception; ``inspect.signature`` parses a
builtin's text signature) still race ours, so a parse that fails on exactly
this error is tried again, up to :data:`TRIES` times in all.
"""

from __future__ import annotations

import ast
import threading
from typing import Any, Literal, overload

__all__ = ["literal_value", "parse_python"]

_LOCK = threading.Lock()
TRIES = 3
_RACE = "AST constructor recursion depth mismatch"


@overload
def parse_python(source: str, filename: str = ..., mode: Literal["exec"] = ...) -> ast.Module: ...
@overload
def parse_python(source: str, filename: str = ..., *, mode: Literal["eval"]) -> ast.Expression: ...
def parse_python(
    source: str, filename: str = "<unknown>", mode: Literal["exec", "eval"] = "exec"
) -> ast.Module | ast.Expression:
    """``ast.parse(source, filename, mode)``, serialized with every other parse of the process.

    Raises what ``ast.parse`` raises (``SyntaxError``, ``ValueError`` for a NUL byte,
    ``RecursionError`` or ``MemoryError`` for pathological nesting); the race's
    ``SystemError`` only when it comes :data:`TRIES` times in a row.
    """
    for _ in range(TRIES - 1):
        try:
            return _parse(source, filename, mode)
        except SystemError as exc:
            if _RACE not in str(exc):
                raise
    return _parse(source, filename, mode)


def _parse(
    source: str, filename: str, mode: Literal["exec", "eval"]
) -> ast.Module | ast.Expression:
    with _LOCK:
        if mode == "eval":
            return ast.parse(source, filename, "eval")
        return ast.parse(source, filename, "exec")


def literal_value(text: str) -> Any:
    """``ast.literal_eval(text)``, its parse serialized as :func:`parse_python`'s."""
    return ast.literal_eval(parse_python(text.lstrip(" \t"), mode="eval"))
