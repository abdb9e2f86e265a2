"""SourceFile's parse check: an edit inside a function is judged by that function alone,
and must agree with a parse of the whole new file."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import pytest

from fixbugs.repair.source import SourceFile, parses

TEXT = '''import os


class Box:
    size = 3

    def grow(self, n):
        if n > 0:
            self.size += n
        return self.size

    async def fetch(self):
        def inner(x):
            return (x,
                    x + 1)
        return inner(1)


def top(a, b):
    """Doc."""
    return a + b
'''


def _offset(text: str, needle: str) -> int:
    i = text.index(needle)
    assert text.count(needle) == 1
    return i


@pytest.mark.parametrize(
    ("needle", "replacement", "expected"),
    [
        ("n > 0", "n >= 0", True),
        ("n > 0", "n >", False),
        ("self.size += n", "self.size += (n", False),  # an open bracket is no fix
        ("x + 1)", "x - 1)", True),  # inside a nested def
        ("return self.size\n", "return self.size\n\n    def extra(self):\n        pass\n", True),
        # a line at the class's level inside a method ends the class: only the file decides
        ("return self.size\n", "return self.size\nx = 1\n", False),
        ('"""Doc."""', '"""Doc.', False),
        ("return a + b", "return a +\\\n        b", True),
        ("size = 3", "size = (", False),  # class level: the whole file is parsed
    ],
)
def test_a_local_parse_agrees_with_the_whole_file(needle, replacement, expected):
    src = SourceFile("m.py", TEXT)
    a = _offset(TEXT, needle)
    b = a + len(needle)
    assert parses(TEXT[:a] + replacement + TEXT[b:]) is expected
    assert src.parses_with(a, b, replacement) is expected


_PIECES = ["(", ")", "x", "\n", '"""', "    y = 1\n", "\tz\n", ":", "else:\n", "\\\n", "#", "'"]


@pytest.mark.parametrize("count", [1, 2])
def test_random_edits_of_real_modules_agree_with_the_whole_file(count):
    rng = random.Random(6 + count)
    root = Path(__file__).resolve().parents[3] / "src" / "fixbugs" / "repair"
    checked = 0
    for path in sorted(root.glob("*.py")):
        text = path.read_text()
        src = SourceFile(path.name, text)
        for _ in range(40):
            edits, at = [], 0
            for _ in range(count):
                a = rng.randrange(at, len(text) + 1)
                b = min(len(text), a + rng.choice([0, 1, 5, 30]))
                edits.append((a, b, rng.choice([*_PIECES, "pass\n", ""])))
                at = b
            whole, at = "", 0
            for a, b, rep in edits:
                whole, at = whole + text[at:a] + rep, b
            whole += text[at:]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = src.parses_with(*edits[0]) if count == 1 else src.parses_with_all(edits[::-1])
                assert got == parses(whole)
            checked += 1
    assert checked > 200


def test_a_pair_of_good_edits_that_empties_a_body_does_not_parse():
    text = "def f():\n    a = 1\n    return a\n\n\ndef g():\n    b = 2\n    return b\n"
    src = SourceFile("m.py", text)
    a, r, b, rb = (
        text.index(s) for s in ("    a = 1\n", "    return a\n", "    b = 2", "    return b")
    )
    drop_a, drop_ret = (a, r, ""), (r, r + len("    return a\n"), "")
    assert src.parses_with(*drop_a) and src.parses_with(*drop_ret)
    assert not src.parses_with_all([drop_a, drop_ret])  # f's body would be empty
    assert src.parses_with_all([drop_a, (b, rb, "    b = 3\n")])  # one edit in each function


def test_replace_lines_inserts_inside_a_method():
    src = SourceFile("m.py", TEXT)
    line = TEXT.splitlines().index("        return self.size") + 1
    e = src.replace_lines(line, line - 1, "        n = abs(n)", "guard", "why")
    assert e is not None and "        n = abs(n)\n        return self.size" in e.new_text
    assert src.replace_lines(line, line - 1, "  n = (", "guard", "why") is None
