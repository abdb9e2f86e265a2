"""The model's edits: one strict parser per form, applied in memory to one unified diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fixbugs.diffs import apply_to_text, diff_files, make_diff
from fixbugs.repair.edits import (
    EditRejected,
    FunctionRewrite,
    SearchReplace,
    UnifiedDiff,
    apply_edits,
    parse_edits,
    render_edits,
    safe_path,
)
from fixbugs.sandbox.reported import read_baseline_text

SHOP = """\
import math


def total(items):
    s = 0
    for x in items:
        s += x
    return s


class Cart:
    def add(self, item):
        self.items.append(item)
        return self

    def size(self):
        return len(self.items) + 1
"""

UTIL = "def pad(s):\n    return s + ' '\n"
FILES = {"shop.py": SHOP, "pkg/util.py": UTIL}


def read(path: str) -> str | None:
    return FILES.get(path)


def applied(answer: str) -> dict[str, str]:
    out = apply_edits(parse_edits(answer), read)
    # the joint diff is the one representation: applying it gives the same files
    for path in diff_files(out.diff):
        assert apply_to_text(FILES[path], out.diff, path) == next(
            f.new for f in out.files if f.path == path
        )
    return {f.path: f.new for f in out.files}


def rejected(answer: str, reader=read) -> str:
    with pytest.raises(EditRejected) as exc:
        apply_edits(parse_edits(answer), reader)
    return str(exc.value)


# -- search/replace -------------------------------------------------------------------

SR_TWO_FILES = """Here is the fix.
```python
shop.py
<<<<<<< SEARCH
        return len(self.items) + 1
=======
        return len(self.items)
>>>>>>> REPLACE
```
shop.py
<<<<<<< SEARCH
    s = 0
=======
    s = 0.0
>>>>>>> REPLACE
pkg/util.py
<<<<<<< SEARCH
    return s + ' '
=======
    return s + '  '
>>>>>>> REPLACE
"""


def test_search_replace_blocks_over_two_files_and_two_hunks():
    parsed = parse_edits(SR_TWO_FILES)
    assert parsed.format == "search_replace" and len(parsed.edits) == 3
    out = applied(SR_TWO_FILES)
    assert "return len(self.items)\n" in out["shop.py"] and "s = 0.0" in out["shop.py"]
    assert out["pkg/util.py"] == "def pad(s):\n    return s + '  '\n"
    res = apply_edits(parsed, read)
    assert res.paths == ("shop.py", "pkg/util.py")
    assert (res.files[0].start, res.files[0].end) == (5, 17)


def test_search_text_must_occur_exactly_once():
    ambiguous = (
        "shop.py\n<<<<<<< SEARCH\n        return self\n=======\n        return 1\n>>>>>>> REPLACE\n"
    )
    assert "ambiguous" not in rejected(ambiguous.replace("return self", "nothing like it"))
    assert "not in the file" in rejected(ambiguous.replace("return self", "nothing like it"))
    twice = "d.py\n<<<<<<< SEARCH\n    return 1\n=======\n    return 2\n>>>>>>> REPLACE\n"
    files = {"d.py": "def f():\n    return 1\n\n\ndef g():\n    return 1\n"}
    assert "ambiguous (found 2 times)" in rejected(twice, files.get)


@pytest.mark.parametrize(
    "answer, why",
    [
        ("shop.py\n<<<<<<< SEARCH\n    s = 0\n=======\n    s = 1\n", "not closed"),
        ("shop.py\n<<<<<<< SEARCH\n    s = 0\n>>>>>>> REPLACE\n", "no '======='"),
        ("<<<<<<< SEARCH\n    s = 0\n=======\n    s = 1\n>>>>>>> REPLACE\n", "names no file"),
        ("shop.py\n<<<<<<< SEARCH\n=======\nx = 1\n>>>>>>> REPLACE\n", "empty SEARCH"),
        ("shop.py\n<<<<<<< SEARCH\n    s = 0\n=======\n    s = (\n>>>>>>> REPLACE\n", "not parse"),
        ("I would change total() to start at 0.0.", "no edit in a known form"),
    ],
)
def test_malformed_search_replace_is_refused_with_its_reason(answer, why):
    assert why in rejected(answer)


# -- unified diffs --------------------------------------------------------------------


def test_a_unified_diff_with_two_hunks_and_two_files_applies():
    new_shop = SHOP.replace("s = 0\n", "s = 0.0\n").replace(") + 1\n", ")\n")
    diff = make_diff("shop.py", SHOP, new_shop) + make_diff("pkg/util.py", UTIL, UTIL + "\n")
    answer = f"```diff\n{diff}```\n"
    parsed = parse_edits(answer)
    assert parsed.format == "unified_diff"
    assert [e.path for e in parsed.edits] == ["shop.py", "pkg/util.py"]
    out = applied(answer)
    assert out["shop.py"] == new_shop and out["pkg/util.py"] == UTIL + "\n"


def test_a_diff_whose_context_or_counts_do_not_match_is_refused():
    diff = make_diff("shop.py", SHOP, SHOP.replace("s = 0\n", "s = 0.0\n"))
    assert "context does not match" in rejected(
        diff.replace(" for x in items:", " for y in items:")
    )
    assert "shorter than its header" in rejected(
        diff.replace("@@ -2,7 +2,7 @@", "@@ -2,12 +2,12 @@")
    )
    assert "longer than its header" in rejected(diff.replace("@@ -2,7 +2,7 @@", "@@ -2,3 +2,3 @@"))


@pytest.mark.parametrize(
    "old, new, why",
    [
        ("/dev/null", "b/new.py", "new files"),
        ("a/shop.py", "/dev/null", "deleting files"),
        ("a/shop.py", "b/other.py", "renames"),
    ],
)
def test_a_diff_may_not_create_delete_or_rename_files(old, new, why):
    assert why in rejected(f"--- {old}\n+++ {new}\n@@ -1 +1 @@\n-import math\n+import os\n")


# -- whole-function rewrites ----------------------------------------------------------


def test_a_method_rewritten_whole_replaces_only_that_method():
    answer = (
        "<<<<<<< FUNCTION shop.py::Cart.size\n"
        "def size(self):\n    return len(self.items)\n"  # written at column 0: re-indented
        ">>>>>>> END\n"
        "<<<<<<< FUNCTION pkg/util.py::pad\n"
        "```python\ndef pad(s):\n    return s\n```\n>>>>>>> END\n"
    )
    parsed = parse_edits(answer)
    assert parsed.edits[0] == FunctionRewrite(
        "shop.py", "Cart.size", "def size(self):\n    return len(self.items)\n"
    )
    out = applied(answer)
    assert out["shop.py"] == SHOP.replace(") + 1\n", ")\n")
    assert out["pkg/util.py"] == "def pad(s):\n    return s\n"


@pytest.mark.parametrize(
    "where, body, why",
    [
        ("shop.py::Cart.remove", "def remove(self):\n    pass\n", "no function Cart.remove"),
        ("shop.py::Cart", "def Cart():\n    pass\n", "no function Cart"),  # a class, not a function
        ("shop.py::total", "def totals(items):\n    return 0\n", "not one definition of total"),
        ("shop.py::total", "def total(items):\n    return (\n", "does not parse"),
        ("shop.py", "def total(items):\n    return 0\n", "not path::qualname"),
    ],
)
def test_a_function_rewrite_that_does_not_fit_is_refused(where, body, why):
    assert why in rejected(f"<<<<<<< FUNCTION {where}\n{body}>>>>>>> END\n")


def test_a_function_defined_twice_is_ambiguous():
    files = {
        "p.py": "if X:\n    def f():\n        return 1\nelse:\n    def f():\n        return 2\n"
    }
    answer = "<<<<<<< FUNCTION p.py::f\ndef f():\n    return 3\n>>>>>>> END\n"
    assert "defined 2 times" in rejected(answer, files.get)


# -- paths and forms ------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "../outside.py", "a/../../b.py", ".git/config", "a\\b.py", "x\x1b.py"]
)
def test_paths_that_leave_the_repository_are_refused(path):
    with pytest.raises(EditRejected):
        safe_path(path)
    answer = f"{path}\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"
    with pytest.raises(EditRejected):
        parse_edits(answer)


def test_a_file_outside_the_listing_or_behind_a_link_is_not_edited(tmp_path: Path):
    (tmp_path / "real.py").write_text("x = 1\n")
    os.symlink(tmp_path / "real.py", tmp_path / "link.py")
    answer = "link.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n"
    # the fix stage reads sources from the pristine baseline, following no link
    assert "not a file of the repository" in rejected(
        answer, lambda p: read_baseline_text(tmp_path, p)
    )
    assert "not a file of the repository" in rejected(answer.replace("link.py", "missing.py"))


def test_an_answer_in_two_forms_is_refused():
    diff = make_diff("pkg/util.py", UTIL, UTIL + "\n")
    with pytest.raises(EditRejected, match="mixes edit forms"):
        parse_edits(SR_TWO_FILES + diff)


def test_an_edit_that_changes_nothing_is_refused():
    assert "changes nothing" in rejected(
        "shop.py\n<<<<<<< SEARCH\n    s = 0\n=======\n    s = 0\n>>>>>>> REPLACE\n"
    )


@pytest.mark.parametrize(
    "edits",
    [
        (
            SearchReplace("shop.py", "    s = 0\n", "    s = 0.0\n"),
            SearchReplace("pkg/util.py", UTIL, ""),
        ),
        (
            UnifiedDiff(
                "shop.py", make_diff("shop.py", SHOP, SHOP.replace("import math", "import os"))
            ),
        ),
        (
            FunctionRewrite(
                "shop.py", "Cart.add", "    def add(self, item):\n        return self\n"
            ),
        ),
    ],
)
def test_rendered_edits_parse_back_to_themselves(edits):
    parsed = parse_edits(render_edits(edits))
    assert parsed.edits == edits
    apply_edits(parsed, read)
