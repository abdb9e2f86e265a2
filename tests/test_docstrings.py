"""Module docstrings: every module says what it holds, and the modules it names exist.

Read with :mod:`ast` (nothing is imported to find them), over every module
of ``src/fixbugs`` and ``agentrt/src/agentrt``. A docstring's first line
must be a sentence: it starts with a capital letter, a name in
backticks or a ``name:`` title, and ends with a full stop (or a question
mark). A bundled example's repository (``fixbugs/examples/*/repo``) is a user's
code and is left out. Every dotted ``fixbugs.x`` or
``agentrt.x`` name in any docstring of a module must be a module, or an
attribute of one, that imports: a name left behind by a move fails here.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREES = (ROOT / "src" / "fixbugs", ROOT / "agentrt" / "src" / "agentrt")
# a dotted name of our packages: fixbugs.x.y or agentrt.x (not a file name such as agentrt.toml)
DOTTED = re.compile(r"(?<![\w./-])((?:fixbugs|agentrt)(?:\.[A-Za-z_]\w*)+)(?![\w/-]|\.[A-Za-z_])")
FILE_SUFFIXES = (".py", ".toml", ".json", ".md", ".txt", ".yaml", ".yml", ".db")


def _modules() -> list[Path]:
    """Our modules; a bundled example's repository is a user's code, not ours."""
    return sorted(p for tree in TREES for p in tree.rglob("*.py") if not _example_code(tree, p))


def _example_code(tree: Path, path: Path) -> bool:
    parts = path.relative_to(tree).parts
    return parts[0] == "examples" and "repo" in parts


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _docstrings(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and (
            doc := ast.get_docstring(node)
        ):
            yield doc


def is_sentence(line: str) -> bool:
    """A first line that reads as a sentence: a capital, a ``name`` or ``name:`` first; a full
    stop (or a question mark) last."""
    line = line.strip()
    named = re.match(r"[a-z][\w.-]*: ", line) is not None  # "agentrt: run ...", as a title
    starts = bool(line) and (line[0].isupper() or line[0] in "`:\"'" or named)
    return starts and line.endswith((".", "?"))


def resolves(dotted: str) -> bool:
    """``dotted`` names a module, or an attribute (a class's attribute too) of one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def dotted_names(text: str) -> set[str]:
    """The dotted names of our packages in ``text``, trailing punctuation dropped."""
    names = set()
    for m in DOTTED.finditer(text):
        name = m.group(1)
        if not name.endswith(FILE_SUFFIXES):
            names.add(name)
    return names


@pytest.mark.parametrize("path", _modules(), ids=_rel)
def test_the_module_docstring_first_line_says_what_it_holds(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc, f"{_rel(path)} has no module docstring"
    first = doc.splitlines()[0]
    assert is_sentence(first), f"{_rel(path)}: first line is not a sentence: {first!r}"


@pytest.mark.parametrize("path", _modules(), ids=_rel)
def test_dotted_names_in_docstrings_exist(path: Path) -> None:
    names = set()
    for doc in _docstrings(ast.parse(path.read_text())):
        names |= dotted_names(doc)
    missing = sorted(n for n in names if not resolves(n))
    assert not missing, f"{_rel(path)} names what does not exist: {missing}"


def test_the_checks_can_fail() -> None:
    assert not is_sentence("the run report.")  # no capital
    assert is_sentence("agentrt: run LLM agent work as distributed systems are run.")
    assert not is_sentence("The run report")  # no full stop
    assert is_sentence("``fixbugs eval``: run the agent over cases.")
    assert dotted_names("see fixbugs.steps.run and agentrt.toml.") == {"fixbugs.steps.run"}
    assert not resolves("fixbugs.steps")  # a module that moved away
    assert not resolves("fixbugs.run.report.no_such_name")
    assert resolves("fixbugs.run.report.RunReport.markdown")
