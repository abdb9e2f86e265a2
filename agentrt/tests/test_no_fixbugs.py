"""agentrt's tests import nothing from fixbugs, so they run with agentrt alone.

Read with ``ast``, not by importing: an import inside a function, under
``TYPE_CHECKING`` or through ``importlib.import_module("fixbugs…")`` counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
DYNAMIC = {"import_module", "__import__", "importorskip"}


def fixbugs_imports(source: str) -> list[str]:
    """The fixbugs modules that ``source`` imports, in order of appearance."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if called in DYNAMIC and isinstance(first, ast.Constant):
                names = [str(first.value)]
        found += [n for n in names if n == "fixbugs" or n.startswith("fixbugs.")]
    return found


def test_no_module_under_agentrt_tests_imports_fixbugs():
    leaks = {
        str(path.relative_to(TESTS)): found
        for path in sorted(TESTS.rglob("*.py"))
        if (found := fixbugs_imports(path.read_text(encoding="utf-8")))
    }
    assert leaks == {}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import fixbugs\n", ["fixbugs"]),
        ("from fixbugs.sandbox import probe\n", ["fixbugs.sandbox"]),
        ("def f():\n    import fixbugs.cli as c\n", ["fixbugs.cli"]),
        ("import importlib\nimportlib.import_module('fixbugs.run')\n", ["fixbugs.run"]),
        ("import pytest\npytest.importorskip('fixbugs')\n", ["fixbugs"]),
        ("import fixbugsish\nfrom . import fixbugs\nrun_name = 'fixbugs'\n", []),
    ],
)
def test_the_finder_sees_every_way_of_importing_fixbugs(source, expected):
    assert fixbugs_imports(source) == expected
