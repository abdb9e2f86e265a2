"""Repair ingredients kept by the index: cut once per file version, read back from its cache."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fixbugs.index import IndexCache, index_texts
from fixbugs.index import spread as spread_module
from fixbugs.repair.generate import Region, generate_candidates
from fixbugs.repair.hints import FailureHints
from fixbugs.repair.ingredients import IngredientIndex
from fixbugs.repair.source import SourceFile

TREE = {
    "pkg/__init__.py": "",
    "pkg/util.py": "def replace_argument(script, old, new):\n    return script.replace(old, new)\n",
    "pkg/rules/a.py": (
        "from pkg.util import replace_argument\n\n\n"
        "def get_new_command(command):\n"
        "    return '{} --staged'.format(command.script)\n"
    ),
    "pkg/rules/b.py": (
        "import os.path\nfrom pkg.util import replace_argument\n\n\n"
        "def get_new_command(command):\n"
        "    return replace_argument(command.script, 'push', 'push --force')\n\n\n"
        "def home(command):\n"
        "    x = os.path.join(command.home, 'é')\n"
        "    return x\n"
    ),
    "pkg/broken.py": "def oops(:\n    pass\n",
    "tests/test_rules.py": "from pkg.rules.a import get_new_command\n\nget_new_command(None)\n",
    "README.md": "replace_argument(x)\n",
}


def _by_path(index) -> dict[str, object]:
    return {f.path: f for f in index.ingredients()}


def test_the_index_cuts_calls_statements_returns_and_attributes_of_source_files() -> None:
    got = _by_path(index_texts(TREE))
    # tests, files that do not parse and files that are not Python hold none
    assert sorted(got) == ["pkg/__init__.py", "pkg/rules/a.py", "pkg/rules/b.py", "pkg/util.py"]
    b = got["pkg/rules/b.py"]
    call = next(p for p in b.pieces if p.kind == "call" and p.key == "replace_argument")
    assert call.text == "replace_argument(command.script, 'push', 'push --force')"
    assert call.names == {"replace_argument", "command"}
    assert call.imports == (("replace_argument", "from pkg.util import replace_argument"),)
    assign = next(p for p in b.pieces if p.kind == "Assign")
    assert assign.text == "x = os.path.join(command.home, 'é')"  # characters, not bytes
    assert {"os", "join", "="} <= assign.tokens
    assert assign.imports == (("os", "import os.path"),)
    returned = [p for p in b.pieces if p.kind == "returned"]
    assert [p.key for p in returned] == ["get_new_command", "home"]
    assert ("command", "home") in b.attributes and ("os", "path") in b.attributes


def test_a_cache_hit_and_worker_processes_give_the_same_ingredients(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = index_texts(TREE).ingredients()
    cold = index_texts(TREE, cache=IndexCache(tmp_path / "cache"))
    assert cold.ingredients() == fresh
    warm = index_texts(TREE, cache=IndexCache(tmp_path / "cache"))
    assert warm.cache_hit and warm.ingredients() == fresh
    monkeypatch.setattr(spread_module, "POOL_MIN_FILES", 0)
    parallel = index_texts(TREE, workers=2, cache=IndexCache(tmp_path / "other"))
    assert parallel.parsed == len(TREE) and parallel.ingredients() == fresh
    again = index_texts(TREE, cache=IndexCache(tmp_path / "other"))
    assert again.cache_hit and again.ingredients() == fresh


def _saved_rows(cache_dir: Path) -> list[object]:
    with sqlite3.connect(cache_dir / "index.sqlite") as db:
        return [r for (r,) in db.execute("SELECT ingredients FROM files")]


def test_ingredients_are_cut_when_a_repair_asks_and_saved_then(tmp_path: Path) -> None:
    index = index_texts(TREE, cache=IndexCache(tmp_path / "cache"))
    assert set(_saved_rows(tmp_path / "cache")) == {None}  # the index's build cut none
    index.ingredients()
    assert sum(r is not None for r in _saved_rows(tmp_path / "cache")) == 4


def test_a_tampered_ingredients_row_is_cut_again_from_the_file(tmp_path: Path) -> None:
    fresh = index_texts(TREE).ingredients()
    index_texts(TREE, cache=IndexCache(tmp_path / "cache")).ingredients()
    with sqlite3.connect(tmp_path / "cache" / "index.sqlite") as db:
        db.execute(
            """UPDATE files SET ingredients = '{"pieces": [["exec", "", "", [], [], []]]}'"""
        )
    warm = index_texts(TREE, cache=IndexCache(tmp_path / "cache"))
    assert warm.cache_hit and warm.ingredients() == fresh


def test_candidates_from_the_index_equal_those_from_the_parsed_files() -> None:
    index = index_texts(TREE)
    path = "pkg/rules/a.py"
    sources = [SourceFile(p, t) for p, t in TREE.items() if p.startswith("pkg/")]

    def candidates(ingredients: IngredientIndex) -> list[str]:
        cands = generate_candidates(
            [Region(path, 4, 5, 1.0)], {path: TREE[path]}, FailureHints(), ingredients=ingredients
        )
        return [c.new_text for c in cands]

    from_index = candidates(IngredientIndex(index.ingredients()))
    assert from_index == candidates(IngredientIndex.of_sources(sources))
    assert any("replace_argument(command.script, 'push'" in t for t in from_index)


def test_a_cache_of_an_older_format_is_replaced_not_kept_aside(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    index_texts(TREE, cache=IndexCache(cache_dir))
    with sqlite3.connect(cache_dir / "index.sqlite") as db:
        db.execute("UPDATE meta SET value = '1' WHERE name = 'format'")
    (cache_dir / "trees" / "old-tree").mkdir()
    index = index_texts(TREE, cache=IndexCache(cache_dir))
    assert any("replaced by format" in n for n in index.notes)
    assert not (cache_dir / "index.sqlite.bad").exists()
    assert not (cache_dir / "trees" / "old-tree").exists()
    again = index_texts(TREE, cache=IndexCache(cache_dir))
    assert again.cache_hit and again.ingredients() == index.ingredients()
