from fixbugs.localize import (
    FileEvidence,
    bm25_evidence,
    import_evidence,
    naming_evidence,
    parse_failure,
    rank_files,
    static_evidence,
    symbol_evidence,
    traceback_evidence,
)
from fixbugs.localize.signals import module_tests

FILES = {
    "app/__init__.py": "",
    "app/types.py": "class Order:\n    def total(self):\n        return 0\n",
    "app/rules/__init__.py": "",
    "app/rules/refund.py": (
        "from app.types import Order\n\ndef match(cmd):\n    return 'refund' in cmd\n\n"
        "def apply_refund(order):\n    return order.total() - 1\n"
    ),
    "app/rules/invoice.py": (
        "def match(cmd):\n    return 'invoice' in cmd\n\n"
        "def render_invoice(x):\n    return str(x)\n"
    ),
    "app/other/refund.py": "def unrelated():\n    pass\n",
    "tests/rules/test_refund.py": "from app.rules.refund import match, apply_refund\n"
    "from app.types import Order\n\ndef test_refund():\n    assert apply_refund(Order()) == 0\n",
    "README.md": "refund refund refund",
}


def test_traceback_evidence_prefers_the_deepest_project_frame():
    report = (
        'Traceback (most recent call last):\n  File "tests/rules/test_refund.py", line 5, in t\n'
        '    x\n  File "app/rules/refund.py", line 7, in apply_refund\n    y\n'
        '  File "app/types.py", line 3, in total\n    z\nValueError: boom\n'
    )
    ev = traceback_evidence(parse_failure(report, FILES.keys()))
    by_path = {e.path: e for e in ev}
    assert set(by_path) == {
        "app/rules/refund.py",
        "app/types.py",
    }  # the test frame is not a suspect
    assert by_path["app/types.py"].strength == 1.0
    assert by_path["app/rules/refund.py"].strength < 1.0
    assert by_path["app/types.py"].lines == ((3, 3),)


def test_imports_resolve_modules_and_imported_submodules():
    ev = import_evidence(["tests/rules/test_refund.py"], FILES)
    assert {e.path for e in ev} == {"app/rules/refund.py", "app/types.py"}


def test_naming_prefers_the_file_in_the_matching_folder():
    ev = {e.path: e.strength for e in naming_evidence(["tests/rules/test_refund.py"], FILES)}
    assert ev["app/rules/refund.py"] == 1.0
    assert ev["app/other/refund.py"] < 1.0


def test_symbols_weigh_rare_names_over_common_ones():
    ev = {e.path: e for e in symbol_evidence("apply_refund(order) and match(cmd) fail", FILES)}
    assert ev["app/rules/refund.py"].strength > ev["app/rules/invoice.py"].strength
    assert "apply_refund" in ev["app/rules/refund.py"].reason


def test_the_project_name_is_no_symbol():
    # sphinx defines a class Sphinx; "Sphinx 4.1" in an issue is the project
    files = {
        "sphinx/__init__.py": "",
        "sphinx/application.py": "class Sphinx:\n    pass\n",
        "sphinx/domains/std.py": "class Glossary:\n    pass\n",
        "src/other/__init__.py": "",
        "src/other/core.py": "class Other:\n    pass\n",
    }
    report = "With `Sphinx` 4.1 and `Other` the `Glossary` directive fails"
    ev = {e.path: e for e in symbol_evidence(report, files)}
    assert set(ev) == {"sphinx/domains/std.py"}  # neither package name counts
    assert "Glossary" in ev["sphinx/domains/std.py"].reason


def test_bm25_ranks_source_files_and_skips_tests_and_docs():
    ev = bm25_evidence("render_invoice returns the wrong invoice", FILES)
    assert ev[0].path == "app/rules/invoice.py" and ev[0].strength == 1.0
    assert all(not e.path.startswith("tests/") and e.path != "README.md" for e in ev)


def test_static_evidence_ranks_the_tested_module_first_without_a_traceback():
    report = "# tests/rules/test_refund.py::test_refund fails\n\nE   assert 1 == 0\n"
    ranked = rank_files(static_evidence(FILES, report, parse_failure(report, FILES.keys()), []))
    assert ranked[0].path == "app/rules/refund.py"
    assert any("named like failing test" in r for r in ranked[0].reasons)


def test_model_evidence_alone_never_ranks_a_file_and_cannot_beat_strong_evidence():
    ev = [
        FileEvidence("a.py", "traceback", 1.0, "deepest frame", ((4, 4),)),
        FileEvidence("b.py", "bm25", 0.2, "weak bm25"),
        FileEvidence("b.py", "model", 1.0, "model likes b"),
        FileEvidence("c.py", "model", 1.0, "model likes c"),
        FileEvidence("tests/test_a.py", "naming", 1.0, "a test file"),
    ]
    ranked = rank_files(ev)
    assert [r.path for r in ranked] == ["a.py", "b.py"]
    assert ranked[0].lines == ((4, 4),)
    assert ranked[1].reasons[0] == "model likes b" or "weak bm25" in ranked[1].reasons


def test_rank_keeps_the_strongest_evidence_per_kind_and_merges_lines():
    ev = [
        FileEvidence("a.py", "sbfl", 0.5, "x", ((1, 2),)),
        FileEvidence("a.py", "sbfl", 0.9, "y", ((3, 5),)),
        FileEvidence("a.py", "traceback", 0.6, "z", ((9, 9),)),
    ]
    [r] = rank_files(ev)
    assert r.score == round(2.0 * 0.9 + 3.0 * 0.6, 4)
    assert r.lines == ((1, 5), (9, 9))


def test_the_tests_of_a_module_are_named_for_it_or_import_it():
    """One rule for the reproduction (existing tests to run) and the validation (module stage)."""
    files = {
        "pkg/__init__.py": "",
        "pkg/calc.py": "",
        "pkg/calculator.py": "",
        "src/lib/mod.py": "",
        "tests/conftest.py": "from pkg.calc import add\n",
        "tests/test_calc.py": "import os\n",
        "tests/test_misc.py": "from pkg.calc import mul\n",
        "tests/test_from_pkg.py": "from pkg import calc\n",
        "tests/test_other.py": "from pkg.calculator import div  # not pkg.calc\n",
        "tests/test_src.py": "from lib.mod import f\n",
        "tests/test_broken.py": "calc = (\n",
    }
    assert module_tests("pkg/calc.py", files) == [
        "tests/test_calc.py",
        "tests/test_from_pkg.py",
        "tests/test_misc.py",
    ]
    assert module_tests("src/lib/mod.py", files) == ["tests/test_src.py"]
    assert module_tests("pkg/__init__.py", files) == []  # every import of pkg names it
    assert module_tests("tests/test_calc.py", files) == []
