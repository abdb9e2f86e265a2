"""The repository index: what it parses, how it resolves, ranks, caches and reads a tree."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from fixbugs.index import (
    IndexCache,
    Target,
    as_index,
    build_index,
    index_texts,
    name_in_file,
    resolve_member,
    resolve_name,
)
from fixbugs.index import spread as spread_module

TREE = {
    "README.md": "A small project about invoices.\n",
    "setup.py": "print('hi')\n",
    "pkg/__init__.py": "from .base import Base\n",
    "pkg/base.py": (
        '"""Bases."""\n\n\nclass Base:\n    """The root."""\n\n'
        "    def describe(self):\n        return 'base'\n\n"
        "    def total(self):\n        return 0\n"
    ),
    "pkg/shapes/__init__.py": "",
    "pkg/shapes/poly.py": (
        "import functools\n"
        "from pkg import Base\n"
        "from ..base import Base as Other\n"
        "from . import circle\n\n\n"
        "class Poly(Base):\n"
        "    @functools.cache\n"
        "    def degree(self):\n"
        "        def helper():\n"
        "            return 1\n"
        "        return helper()\n\n"
        "    async def fetch(self):\n"
        '        raise ValueError("Invalid polynomial Degree for the ring")\n\n\n'
        "Point = namedtuple('Point', 'x y')\n"
    ),
    "pkg/shapes/circle.py": (
        "import pkg.base\n\n\n"
        "class Circle(pkg.base.Base):\n"
        "    def radiusOfCurvature(self):\n"
        "        return 'parse_state httpServer'\n"
    ),
    "pkg/loop.py": ("from pkg.loop2 import B\n\n\nclass A(B):\n    pass\n"),
    "pkg/loop2.py": "from pkg.loop import A\n\n\nclass B(A):\n    pass\n",
    "pkg/broken.py": "def oops(:\n    pass\n",
    "src/lib/__init__.py": "",
    "src/lib/tool.py": "def run_tool():\n    return 'tool'\n",
    "tests/test_poly.py": (
        "from pkg.shapes.poly import Poly\n\n\ndef test_degree():\n    assert Poly().degree()\n"
    ),
}


@pytest.fixture(name="index")
def index_fixture():
    return index_texts(TREE)


def test_symbols_have_qualnames_kinds_bases_and_spans_from_the_first_decorator(index) -> None:
    poly = index.symbol("Poly", "pkg/shapes/poly.py")
    assert poly is not None and poly.kind == "class" and poly.bases == ("Base",)
    assert (poly.start, poly.end) == (7, 15)
    degree = index.symbol("Poly.degree")
    assert degree is not None and degree.kind == "method" and (degree.start, degree.end) == (8, 12)
    helper = index.symbol("Poly.degree.helper")
    assert helper is not None and helper.kind == "function" and helper.name == "helper"
    assert [s.name for s in index.methods_of(poly)] == ["degree", "fetch"]
    circle = index.symbol("Circle")
    assert circle is not None and circle.bases == ("pkg.base.Base",)
    entry = index.entry("pkg/shapes/poly.py")
    assert entry is not None and [s.name for s in entry.assigned] == ["Point"]
    assert index.symbols_named("describe")[0].path == "pkg/base.py"


def test_modules_and_relative_imports_are_absolute(index) -> None:
    assert index.module_of("pkg/shapes/poly.py") == "pkg.shapes.poly"
    assert index.module_of("pkg/__init__.py") == "pkg"
    assert index.module_of("src/lib/tool.py") == "lib.tool"  # a src/ layout
    assert index.file_of_module("pkg.shapes") == "pkg/shapes/__init__.py"
    assert index.file_of_module("lib.tool") == "src/lib/tool.py"
    entry = index.entry("pkg/shapes/poly.py")
    assert entry is not None
    refs = {(r.module, r.names, r.level) for r in entry.imports}
    assert ("pkg.base", ("Base",), 2) in refs
    assert ("pkg.shapes", ("circle",), 1) in refs
    assert ("functools", (), 0) in refs
    assert index.imports_of("pkg/shapes/poly.py") == (
        "pkg/__init__.py",
        "pkg/base.py",
        "pkg/shapes/circle.py",
        "pkg/shapes/__init__.py",
    )
    assert "tests/test_poly.py" in index.importers_of("pkg/shapes/poly.py")


def test_relative_import_above_the_top_package_keeps_its_dots() -> None:
    index = index_texts({"top/__init__.py": "", "top/m.py": "from ...far import x\n"})
    entry = index.entry("top/m.py")
    assert entry is not None and entry.imports[0].module == "...far"
    assert index.imports_of("top/m.py") == ()


def test_members_resolve_through_bases_imports_and_reexports(index) -> None:
    poly = index.symbol("Poly")
    circle = index.symbol("Circle")
    assert poly is not None and circle is not None
    own = resolve_member(index, poly, "degree")
    assert own is not None and own.path == "pkg/shapes/poly.py"
    # Base comes through the package's __init__ re-exporting it from pkg.base
    inherited = resolve_member(index, poly, "total")
    assert inherited is not None and (inherited.path, inherited.qualname) == (
        "pkg/base.py",
        "Base.total",
    )
    # a dotted base through `import pkg.base`
    through = resolve_member(index, circle, "describe")
    assert through is not None and through.qualname == "Base.describe"
    assert resolve_member(index, poly, "nowhere") is None


def test_a_cycle_of_bases_ends_the_search(index) -> None:
    a = index.symbol("A")
    assert a is not None and a.bases == ("B",)
    assert resolve_member(index, a, "missing") is None


def test_literals_mark_docstrings_and_hits_fold_case(index) -> None:
    entry = index.entry("pkg/base.py")
    assert entry is not None
    docs = {lit.text: lit.docstring for lit in entry.literals}
    assert docs == {"Bases.": True, "The root.": True, "base": False}
    assert index.literal_hits("invalid POLYNOMIAL degree") == (("pkg/shapes/poly.py", 15),)
    assert index.literal_hits("The root") == ()  # docstrings are never printed


def test_a_file_that_does_not_parse_is_recorded_with_its_error(index) -> None:
    entry = index.entry("pkg/broken.py")
    assert entry is not None and entry.parse_error is not None
    assert entry.parse_error.startswith("SyntaxError")
    assert entry.symbols == () and "pkg/broken.py" in index.paths
    assert index.entry("README.md") is None and index.text("README.md") == TREE["README.md"]


def test_bm25_splits_identifiers_and_ranks_files_and_symbols(index) -> None:
    files = index.bm25("the radius of curvature is wrong", 3)
    assert files[0][0] == "pkg/shapes/circle.py" and files[0][1] > 0
    assert all(not p.startswith("tests/") for p, _ in index.bm25("degree poly", 10))
    symbols = index.bm25_symbols("radius curvature", 2)
    assert symbols[0][0].qualname == "Circle.radiusOfCurvature"
    assert index.bm25("zzzz qqqq", 5) == []


def test_as_index_keeps_an_index_and_indexes_a_dict(index) -> None:
    assert as_index(index) is index
    assert as_index({"a.py": "def f():\n    pass\n"}).symbol("f") is not None


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_the_cache_is_hit_then_reused_file_by_file_for_a_changed_tree(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(root, TREE)
    cache_dir = tmp_path / "cache"
    cold = build_index(root, cache=IndexCache(cache_dir), workers=1)
    assert not cold.cache_hit and cold.parsed == len(TREE)
    warm = build_index(root, cache=IndexCache(cache_dir), workers=1)
    assert warm.cache_hit and warm.parsed == 0 and warm.notes == ()
    assert warm.entries() == cold.entries()
    assert warm.bm25("radius curvature", 3) == cold.bm25("radius curvature", 3)
    assert warm.bm25_symbols("radius", 2) == cold.bm25_symbols("radius", 2)
    (root / "pkg/base.py").write_text(TREE["pkg/base.py"] + "\n\ndef extra_helper():\n    pass\n")
    changed = build_index(root, cache=IndexCache(cache_dir), workers=1)
    assert not changed.cache_hit and changed.parsed == 1
    assert changed.symbol("extra_helper") is not None
    assert changed.tree_key != cold.tree_key


def test_a_corrupt_cache_is_set_aside_with_a_note(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    (cache_dir / "index.sqlite").write_bytes(b"this is not a database" * 100)
    index = index_texts(TREE, cache=IndexCache(cache_dir))
    assert index.symbol("Poly") is not None
    assert any("ignored" in n for n in index.notes)
    assert (cache_dir / "index.sqlite.bad").exists()
    again = index_texts(TREE, cache=IndexCache(cache_dir))
    assert again.cache_hit  # the new database was written and read back


def test_a_tampered_row_is_not_trusted(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    index_texts(TREE, cache=IndexCache(cache_dir))
    with sqlite3.connect(cache_dir / "index.sqlite") as db:
        db.execute('UPDATE files SET facts = \'{"format": 1, "path": 5}\'')
    index = index_texts(TREE, cache=IndexCache(cache_dir))
    assert not index.cache_hit and index.parsed == len(TREE)
    assert index.symbol("Poly") is not None
    assert any("ignored" in n for n in index.notes)


def test_a_foreign_bm25_table_is_not_loaded(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    first = index_texts(TREE, cache=IndexCache(cache_dir))
    other = index_texts({"x.py": "def lone():\n    pass\n"}, cache=IndexCache(cache_dir))
    tables = cache_dir / "trees"
    for name in ("files", "symbols"):
        src, dst = tables / other.tree_key / name, tables / first.tree_key / name
        for f in dst.iterdir():
            f.unlink()
        for f in src.iterdir():
            (dst / f.name).write_bytes(f.read_bytes())
    index = index_texts(TREE, cache=IndexCache(cache_dir))
    assert not index.cache_hit and any("unusable" in n for n in index.notes)
    assert index.bm25("radius curvature", 1)[0][0] == "pkg/shapes/circle.py"


def test_a_symlink_in_the_tree_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text("def host_secret():\n    pass\n")
    root = tmp_path / "repo"
    _write(root, {"app.py": "def main():\n    pass\n"})
    os.symlink(outside, root / "linked.py")
    os.symlink(tmp_path, root / "linked_dir")
    index = build_index(root, workers=1)
    assert index.paths == ("app.py",)
    assert index.symbols_named("host_secret") == ()


def test_worker_processes_give_the_same_index(monkeypatch: pytest.MonkeyPatch) -> None:
    serial = index_texts(TREE, workers=1)
    monkeypatch.setattr(spread_module, "POOL_MIN_FILES", 0)
    parallel = index_texts(TREE, workers=2)
    assert parallel.entries() == serial.entries()
    assert parallel.bm25("radius of curvature", 5) == serial.bm25("radius of curvature", 5)
    assert parallel.bm25_symbols("degree", 5) == serial.bm25_symbols("degree", 5)


def test_parse_workers_import_nothing_of_the_folder_fixbugs_runs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a user runs FixBugs from inside their repository: a module there named like one
    # the worker imports (json) must not run on the host when the workers start
    marker = tmp_path / "ran"
    (tmp_path / "json.py").write_text(f"open({str(marker)!r}, 'w').write('host')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(spread_module, "POOL_MIN_FILES", 0)
    parallel = index_texts(TREE, workers=2)
    assert parallel.entries() == index_texts(TREE, workers=1).entries()
    assert not marker.exists()


def test_a_base_follows_the_same_rule_as_a_reports_name_star_imports_included() -> None:
    # one resolver: a class's base is found as a report's `from core import Expr` is,
    # through a package's star re-export; a script outside any package keeps its own names
    index = index_texts(
        {
            "core/__init__.py": "from .expr import *\n",
            "core/expr.py": "class Expr:\n    def doit(self):\n        return 1\n",
            "core/add.py": "from core import Expr\n\n\nclass Add(Expr):\n    pass\n",
            "run_me.py": (
                "class Local:\n    def go(self):\n        pass\n\n\nclass Main(Local):\n    pass\n"
            ),
        }
    )
    add = index.symbol("Add")
    assert add is not None
    via_star = resolve_member(index, add, "doit")
    assert via_star is not None and (via_star.path, via_star.qualname) == (
        "core/expr.py",
        "Expr.doit",
    )
    assert resolve_name(index, "core", "Expr") == Target("core/expr.py", index.symbol("Expr"))
    main = index.symbol("Main")
    assert main is not None
    local = resolve_member(index, main, "go")
    assert local is not None and local.qualname == "Local.go"
    assert name_in_file(index, "core/add.py", "Expr[int]") == resolve_name(index, "core", "Expr")
