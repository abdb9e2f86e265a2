"""parse_python: every parse of the process one at a time (CPython gh-106905).

Before 3.11.8, two threads converting a parse tree at once could unbalance
the interpreter-wide depth counter, and ``ast.parse`` raised ``SystemError``
in a stage of one bug because another bug was being parsed. The check here
stands in a slow parse for the real one and counts parses in progress.
"""

from __future__ import annotations

import ast
import threading
import time

import pytest

from agentrt import _pyast, literal_value, parse_python


def test_parses_from_many_threads_never_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    inside, most = 0, 0
    count = threading.Lock()
    real = ast.parse

    def slow_parse(source: str, filename: str, mode: str) -> ast.AST:
        nonlocal inside, most
        with count:
            inside += 1
            most = max(most, inside)
        time.sleep(0.002)  # a conversion long enough for another thread to start one
        with count:
            inside -= 1
        return real(source, filename, mode)

    monkeypatch.setattr(_pyast.ast, "parse", slow_parse)
    threads = [
        threading.Thread(target=lambda: [parse_python("x = [1, (2, 3)]") for _ in range(5)])
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 1


def test_it_parses_as_ast_parse_does() -> None:
    assert isinstance(parse_python("a = 1\n"), ast.Module)
    assert isinstance(parse_python("a + 1", mode="eval"), ast.Expression)
    assert literal_value("  (1, 'a', [None])") == (1, "a", [None])
    with pytest.raises(SyntaxError):
        parse_python("def (:")
    with pytest.raises(ValueError):
        literal_value("open('x')")


def test_a_parse_another_parser_raced_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # a parse outside the lock (3.11's traceback module places its carets with one)
    # can still unbalance ours: that error, and only that one, earns another try
    real, calls = ast.parse, []

    def raced(source: str, filename: str, mode: str) -> ast.AST:
        calls.append(source)
        if len(calls) < _pyast.TRIES:
            raise SystemError("AST constructor recursion depth mismatch (before=36, after=218)")
        return real(source, filename, mode)

    monkeypatch.setattr(_pyast.ast, "parse", raced)
    assert isinstance(parse_python("x = 1"), ast.Module)
    assert len(calls) == _pyast.TRIES
    calls.clear()

    def always(source: str, filename: str, mode: str) -> ast.AST:
        raise SystemError("AST constructor recursion depth mismatch (before=1, after=2)")

    monkeypatch.setattr(_pyast.ast, "parse", always)
    with pytest.raises(SystemError):
        parse_python("x = 1")

    def other(source: str, filename: str, mode: str) -> ast.AST:
        calls.append(source)
        raise SystemError("something else")

    monkeypatch.setattr(_pyast.ast, "parse", other)
    with pytest.raises(SystemError, match="something else"):
        parse_python("x = 1")
    assert calls == ["x = 1"]  # not tried again
