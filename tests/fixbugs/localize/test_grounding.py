"""An unlisted region named by a judge: what its answer names and quotes, held to the file."""

from __future__ import annotations

from fixbugs.localize.grounding import ground_named_code, read_named_code

CODE = (
    "def parse(row):\n"  # 1
    "    key = row[0]\n"
    "    return key\n"
    "\n"
    "\n"
    "def render(row):\n"  # 6
    "    key = row[0]\n"
    "    out = key.upper()\n"
    "    return out\n"
)
FILES = {"pkg/rows.py": CODE, "tests/test_rows.py": "def test_it():\n    assert True\n"}


def test_the_first_line_names_the_file_function_and_line_the_rest_is_quote_or_prose() -> None:
    named = read_named_code(
        "`pkg/rows.py`, function render (line 7)\n"
        "> key = row[0]\n"
        ">     ...\n"
        "```\n    8 |     out = key.upper()\n```\n"
        "render upper-cases `key` before checking it.",
        FILES.keys(),
    )
    assert (named.path, named.function, named.line) == ("pkg/rows.py", "render", 7)
    assert named.quoted == ("key = row[0]", "out = key.upper()")  # '...' is no quote
    assert named.explanation == "render upper-cases `key` before checking it."
    assert named.inline == ("key",)


def test_a_repeated_line_is_placed_in_the_named_function_or_near_the_other_quotes() -> None:
    in_render = read_named_code("pkg/rows.py, def render\n> key = row[0]\nwhy", FILES.keys())
    region, why = ground_named_code(in_render, FILES)
    assert why is None and region is not None
    assert (region.function, region.start, region.end) == ("render", 6, 9)
    near = read_named_code(
        "pkg/rows.py\n> key = row[0]\n> return key\nwhy", FILES.keys()
    )  # no function: the occurrence next to the other quoted line
    region, _ = ground_named_code(near, FILES)
    assert region is not None and region.function == "parse"
    hinted = read_named_code("pkg/rows.py, line 7\n> key = row[0]\nwhy", FILES.keys())
    region, _ = ground_named_code(hinted, FILES)
    assert region is not None and region.function == "render"


def test_a_quote_outside_the_named_function_or_a_test_file_is_no_region() -> None:
    elsewhere = read_named_code("pkg/rows.py, function parse\n> out = key.upper()\n", FILES.keys())
    region, why = ground_named_code(elsewhere, FILES)
    assert region is None and "not in function parse of pkg/rows.py" in (why or "")
    test = read_named_code("tests/test_rows.py, function test_it\n> assert True\n", FILES.keys())
    region, why = ground_named_code(test, FILES)
    assert region is None and "test file" in (why or "")


def test_inline_spans_count_only_when_they_are_whole_lines_and_nothing_else_is_quoted() -> None:
    names_only = read_named_code("pkg/rows.py\nThe `key` and `out` are wrong.", FILES.keys())
    region, why = ground_named_code(names_only, FILES)
    assert region is None and "quoted none of its code" in (why or "")
    a_line = read_named_code("pkg/rows.py\nThe `key` in `out = key.upper()` is.", FILES.keys())
    region, why = ground_named_code(a_line, FILES)
    assert why is None and region is not None and region.function == "render"


def test_an_inline_quote_keeps_its_inner_white_space() -> None:
    files = {"pkg/names.py": 'def label(src):\n    return f"{src.name}  (original)"\n'}
    named = read_named_code(
        'pkg/names.py, line 2\nThe line `return f"{src.name}  (original)"` drops the path.',
        files.keys(),
    )
    region, why = ground_named_code(named, files)
    assert why is None and region is not None and region.function == "label"
