"""Adversarial texts and the parsers of untrusted text they are aimed at.

Every parser that reads what a user or a test run wrote (the report, a log
line, a pasted traceback, a test's output, a model's answer that quotes
them) must take time linear in its input: a quadratic pattern on a 60 KB
report held the service's event loop for 48 s. The service now runs them in
worker threads, off its loop, but Python's ``re`` holds the GIL for a whole
call, so a call over a whole long text still stalls every tenant for its
duration: they read whole texts in pieces (:mod:`fixbugs.inputs.pieces`). :data:`GENERATORS`
make texts of a given size shaped to provoke backtracking (unclosed fences,
runs of a pattern's own punctuation, one long line, ...); :data:`PARSERS`
are the entry points, each a function of one string. ``fixbugs bench
hostile`` (:mod:`fixbugs.bench.hostile`) times every pair at growing
sizes; ``tests/security/test_linear_parsing.py`` keeps the guard.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

__all__ = ["GENERATORS", "PARSERS", "make"]


def _repeat(unit: str) -> Callable[[int], str]:
    def gen(size: int) -> str:
        return (unit * (size // len(unit) + 1))[:size]

    return gen


def _line_of(letter: str, tail: str = "") -> Callable[[int], str]:
    def gen(size: int) -> str:
        return letter * max(0, size - len(tail)) + tail

    return gen


def _indented(size: int) -> str:
    lines: list[str] = []
    total, depth = 0, 0
    while total < size:
        line = " " * depth + "x = f("
        lines.append(line)
        total += len(line) + 1
        depth += 1
    return "\n".join(lines)[:size]


def _nested(size: int) -> str:
    half = size // 2
    return "(" * half + ")" * (size - half)


def _numbers(size: int) -> str:
    return "line " + "9" * max(0, size - 5)


# name -> text of (about) ``size`` characters
GENERATORS: dict[str, Callable[[int], str]] = {
    "unclosed fences": _repeat("```py\n"),
    "fence runs": _line_of("`"),
    "tilde fences": _repeat("~~~python\nx\n"),
    ">>> runs": _repeat(">>> "),
    ">>> lines": _repeat(">>> f(\n"),
    "one letter": _line_of("a"),
    "EEE...Error": _line_of("E", "Error"),
    "E lines": _repeat("E   "),
    'File " repeated': _repeat('File "'),
    "Traceback repeated": _repeat("Traceback (most recent call last):\n"),
    "spaces": _line_of(" ", "x"),
    "deep indentation": _indented,
    "colons": _line_of(":"),
    "dots": _line_of("."),
    "numbers": _numbers,
    "long identifier": _line_of("a_B", "("),
    "dotted name": _repeat("a."),
    "path parts": _repeat("a/"),
    "links": _repeat("https://h/blob/x/"),
    "punctuation": _repeat("`'\"()[]{}<>:.=,/\\-_#$%@*+|~ "),
    "underscores": _repeat("_ "),
    "dashes": _repeat("-"),
    "equals": _repeat("="),
    "assert runs": _repeat("assert a == "),
    "backspaces": lambda size: "a" * (size // 2) + "\b" * (size - size // 2),
    "escapes": _repeat("\x1b["),
    "nested parens": _nested,
    "NUL and surrogates": _repeat("\0\ud800x"),
    "prompt chars": _repeat("a$"),
    "blank lines": _repeat(" \n"),
}


def make(generator: str, size: int) -> str:
    """The adversarial text ``generator`` makes, ``size`` characters long."""
    return GENERATORS[generator](size)


@cache
def _files() -> dict[str, str]:
    """A small repository the evidence signals read the report against."""
    return {
        "pkg/__init__.py": "",
        "pkg/calc.py": (
            "import os\n\n\ndef add_numbers(a, b):\n"
            '    """Add a and b."""\n'
            '    raise ValueError("cannot add these values")\n\n\n'
            "class Parser:\n    def parse_line(self, text):\n        return text.split(':')\n"
        ),
        "tests/test_calc.py": (
            "from pkg.calc import add_numbers\n\n\ndef test_add():\n"
            "    assert add_numbers(1, 2) == 3\n"
        ),
    }


def _static(text: str) -> object:
    from fixbugs.localize.locate import static_evidence
    from fixbugs.localize.traceback import parse_failure

    files = _files()
    return static_evidence(files, text, parse_failure(text, files.keys()), ())


def _report_statements(text: str) -> object:
    from fixbugs.localize.report_code import report_statements

    return report_statements(text)


def _snippets(text: str) -> object:
    from fixbugs.inputs.snippets import extract_snippets

    return extract_snippets(text)


def _parse_failure(text: str) -> object:
    from fixbugs.localize.traceback import parse_failure

    return parse_failure(text, _files().keys())


def _report_text(text: str) -> object:
    from fixbugs.localize import report_text as rt

    return (
        rt.code_words(text),
        rt.typed_commands(text),
        rt.code_lines(text),
        rt.evidence_text(text),
    )


def _assertions(text: str) -> object:
    from fixbugs.localize.assertions import assertion_values, called_names

    return assertion_values(text), called_names(text)


def _grounding(text: str) -> object:
    from fixbugs.localize.grounding import read_named_code

    return read_named_code(text, _files().keys())


def _pytest_output(text: str) -> object:
    from fixbugs.pyenv.failures import environment_signature
    from fixbugs.pyenv.testoutput import failure_excerpt, failures, parse_outcomes
    from fixbugs.pyenv.testverdict import classify_run

    return (
        failures("pytest", text),
        failure_excerpt("pytest", text),
        environment_signature(text),
        parse_outcomes(text),
        classify_run("pytest", 1, text),
    )


def _unittest_output(text: str) -> object:
    from fixbugs.pyenv.testoutput import failure_excerpt, failures
    from fixbugs.pyenv.testverdict import classify_run

    return (
        failures("unittest", text),
        failure_excerpt("unittest", text),
        classify_run("unittest", 1, text),
    )


def _final_exception(text: str) -> object:
    from fixbugs.pyenv.raised import final_exception
    from fixbugs.pyenv.testoutput import failure_message

    return final_exception(text), failure_message(text)


def _findtest(text: str) -> object:
    from fixbugs.localize.traceback import parse_failure
    from fixbugs.stages.findtest import command_from_report, matching_failure

    failure = parse_failure(text, _files().keys())
    return command_from_report(text), matching_failure(["t.py::test"], text, failure, text)


def _log_line(text: str) -> object:
    from fixbugs.inputs.logs import parse_line

    return parse_line(text)


def _hints(text: str) -> object:
    from fixbugs.repair.hints import parse_hints
    from fixbugs.repair.stepping import FailurePoint

    return parse_hints(text), FailurePoint.parse(text)


def _clean(text: str) -> object:
    from fixbugs.inputs.textfile import clean_text

    return clean_text(text)


def _one_line(text: str) -> object:
    from fixbugs.inputs.inert import one_line

    return one_line(text)


def _snippet_judge(text: str) -> object:
    from fixbugs.inputs.snippets import Snippet
    from fixbugs.stages.snippet import judge_snippet_run

    shown = Snippet("import pkg\n", "block", output=text)
    return judge_snippet_run(shown, "import pkg\n", 1, text, text)


# name -> parser of one untrusted text (what it returns is not looked at)
PARSERS: dict[str, Callable[[str], object]] = {
    "clean_text": _clean,
    "extract_snippets": _snippets,
    "report_text": _report_text,
    "report_statements": _report_statements,
    "parse_failure": _parse_failure,
    "static_evidence": _static,
    "assertions": _assertions,
    "read_named_code": _grounding,
    "findtest": _findtest,
    "pytest output": _pytest_output,
    "unittest output": _unittest_output,
    "final_exception": _final_exception,
    "snippet verdict": _snippet_judge,
    "log line": _log_line,
    "one_line": _one_line,
    "failure hints": _hints,
}
