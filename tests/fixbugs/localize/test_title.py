"""The names a report's title writes point at the files that define them."""

from __future__ import annotations

from fixbugs.localize.signals import title_evidence

FILES = {
    "sympy/functions/special/zeta_functions.py": "class polylog:\n    pass\n",
    "sympy/core/expr.py": "class Expr:\n    def expand(self):\n        pass\n",
    "sympy/a.py": "def add():\n    pass\n",
    "sympy/b.py": "def add():\n    pass\n",
    "sympy/c.py": "def add():\n    pass\n",
    "sympy/__init__.py": "",
    "sympy/tests/test_polylog.py": "def polylog():\n    pass\n",
}


def test_the_titles_name_is_evidence_for_its_defining_file_only() -> None:
    report = "# Add evaluation for polylog\n\n>>> polylog(2, 1).expand()\n"
    (ev,) = title_evidence(report, FILES)
    assert (ev.path, ev.kind, ev.strength) == (
        "sympy/functions/special/zeta_functions.py",
        "title",
        1.0,
    )
    assert "polylog" in ev.reason and "title" in ev.reason


def test_a_title_word_many_files_define_and_the_projects_name_count_for_nothing() -> None:
    assert title_evidence("Add is broken in SymPy\n\n`Add(x)`, `SymPy`\n", FILES) == []
    assert title_evidence("sympy fails\n\n`import sympy`\n", FILES) == []


def test_a_title_word_the_report_never_writes_as_code_is_prose() -> None:
    assert title_evidence("Add evaluation for polylog\n\nPlease.\n", FILES) == []
