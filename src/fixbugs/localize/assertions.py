"""The failing assertion's two sides, read from pytest or unittest output.

``assert get_new_command(cmd) == 'man 3 read'`` failing prints what the
code gave and what the test wanted. Both sides are evidence: the expected
value says what the code should produce, the actual value often shows the
code's own string pieces (``'read --help'``), and the call on the left
names the function under test. Pure parsing; no repository access.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Assertion", "assertion_values", "called_names"]

# pytest: "E       AssertionError: assert 'a' == 'b'" or "E       assert 'a' == 'b'"
_PYTEST = re.compile(
    r"^(?:E\s+(?:AssertionError:\s*)?|AssertionError:\s*)"
    r"assert\s+(?P<left>.+?)\s+(?P<op>==|!=|in|is)\s+(?P<right>.+)$"
)
# pytest's diff lines: "E         - got" / "E         + want"
_DIFF = re.compile(r"^E\s+(?P<sign>[-+])\s(?P<text>.*)$")
# unittest: "AssertionError: 'a' != 'b'"
_UNITTEST = re.compile(r"^AssertionError:\s+(?P<left>.+?)\s+!=\s+(?P<right>.+)$")
_SOURCE_ASSERT = re.compile(r"^assert\s+(?P<expr>.+)$")
# unittest's "self.assertEqual(f(x), y)" as a traceback quotes it
_UNITTEST_CALL = re.compile(r"^(?:self\.)?assert[A-Z]\w*\((?P<expr>.+)$")
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_NOT_CALLS = frozenset(
    {"assert", "print", "len", "list", "dict", "set", "tuple", "str", "int", "Mock"}
)


@dataclass(frozen=True, slots=True)
class Assertion:
    actual: str  # what the code gave (pytest's left side, or its "-" diff line)
    expected: str  # what the test wanted
    source: str = ""  # the assert statement as quoted, when shown


def assertion_values(text: str) -> list[Assertion]:
    """Each failing comparison the output shows, first seen first."""
    out: list[Assertion] = []
    minus: str | None = None
    for line in text.splitlines():
        m = _PYTEST.match(line.strip())
        if m and m["op"] in ("==", "!="):
            out.append(Assertion(m["left"].strip(), m["right"].strip()))
            continue
        d = _DIFF.match(line.strip())
        if d:
            if d["sign"] == "-":
                minus = d["text"]
            elif minus is not None:
                out.append(Assertion(minus, d["text"]))
                minus = None
            continue
        u = _UNITTEST.match(line.strip())
        if u:
            out.append(Assertion(u["left"].strip(), u["right"].strip()))
    return list(dict.fromkeys(out))


def called_names(text: str) -> list[str]:
    """Functions called in the failing ``assert`` lines (pytest marks them with ``>``,
    a traceback quotes them; ``self.assertEqual(...)`` too), and in pytest's
    ``where X = f(...)`` explanations: the code under test."""
    names: list[str] = []
    for raw in text.splitlines():
        line = raw.strip().removeprefix(">").strip()
        m = _SOURCE_ASSERT.match(line) or _UNITTEST_CALL.match(line)
        if m:
            names += [n for n in _CALL.findall(m["expr"]) if not n.startswith("assert")]
            continue
        line = raw.strip()
        if line.startswith("E") and "where" in line:
            # lower-case only: ``where False = match(Command(...))`` builds its argument
            names += [n for n in _CALL.findall(line.split("where", 1)[1]) if n[:1].islower()]
    return [n for n in dict.fromkeys(names) if n not in _NOT_CALLS]
