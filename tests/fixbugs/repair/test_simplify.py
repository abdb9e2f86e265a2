"""The simplifying templates: each proposes its repair on a snippet, and only where its shape is."""

from __future__ import annotations

import textwrap

from snippetkit import everything, new_texts, src_of

from fixbugs.repair.generate import Region, generate_candidates
from fixbugs.repair.hints import FailureHints, printed_literal_lines
from fixbugs.repair.literals import regex_edits
from fixbugs.repair.simplify import (
    fallback_edits,
    index_slice_edits,
    local_constant_edits,
    prefix_slice_edits,
    split_empty_edits,
    unwrap_edits,
)


def test_unwrap_an_attribute_a_method_call_and_a_conversion():
    src = src_of(
        """\
        import datetime


        def f(src, stamp, n):
            name = f"{src.name} (original)"
            day = datetime.date.today()
            t = stamp.timetuple()
            return int(n) + self.size
        """
    )
    texts = new_texts(unwrap_edits(src, everything(src)))
    assert any('name = f"{src} (original)"' in t for t in texts)
    assert any("t = stamp\n" in t for t in texts)
    assert any("return n + self.size" in t for t in texts)
    # an object's own state is never unwrapped, nor a method's receiver alone
    assert not any("return int(n) + self\n" in t for t in texts)
    assert not any("t = stamp()" in t for t in texts)
    assert not any("day = datetime.today()" in t or "day = datetime\n" in t for t in texts)


def test_unwrap_every_read_of_the_same_attribute_in_the_function_at_once():
    src = src_of(
        """\
        def names(src):
            a = f"{src.name}  (original)"
            b = f"{src.name}  (formatted)"
            return a, b
        """
    )
    both = [e for e in unwrap_edits(src, everything(src)) if "2 times" in e.why]
    assert [e.new_text for e in both] == [
        'def names(src):\n    a = f"{src}  (original)"\n    b = f"{src}  (formatted)"\n'
        "    return a, b\n"
    ]
    assert (both[0].start, both[0].end) == (2, 3)


def test_a_constant_takes_the_value_the_function_gives_the_same_variable():
    src = src_of(
        """\
        def width(s):
            col = 0
            for ch in s:
                if ch == " ":
                    col += 1
                elif ch == "\\t":
                    col += 4
            return s[8]
        """
    )
    edits = list(local_constant_edits(src, everything(src)))
    assert any("col += 1\n        elif ch == \"\\t\":\n            col += 1\n" in e.new_text
               for e in edits)  # fmt: skip
    assert all("for `col`" in e.why for e in edits)
    # a constant in no such role (an index) is left to the ±1 template
    assert not any("s[0]" in e.new_text or "s[4]" in e.new_text for e in edits)


def test_index_becomes_a_one_item_slice_only_after_an_index_error():
    src = src_of("def f(s):\n    if s[-1] != '\\n':\n        s += '\\n'\n    return s[0]\n")
    assert list(index_slice_edits(src, everything(src), ("KeyError",))) == []
    texts = new_texts(index_slice_edits(src, everything(src), ("IndexError",)))
    assert "def f(s):\n    if s[-1:] != '\\n':\n        s += '\\n'\n    return s[0]\n" in texts
    assert "def f(s):\n    if s[-1] != '\\n':\n        s += '\\n'\n    return s[0:1]\n" in texts


def test_a_hard_coded_prefix_length_becomes_a_replace():
    src = src_of("def fix(command):\n    return 'open http://' + command.script[5:]\n")
    edits = list(prefix_slice_edits(src, everything(src)))
    assert [e.template for e in edits] == ["prefix_replace"]  # not an ingredient: no other file
    texts = new_texts(edits)
    assert texts == [
        "def fix(command):\n    return command.script.replace('open ', 'open http://', 1)\n"
    ]
    # a slice longer than the literal says nothing about a prefix
    other = src_of("def fix(s):\n    return 'ab' + s[5:]\n")
    assert list(prefix_slice_edits(other, everything(other))) == []


def test_fallback_takes_the_handlers_code_and_never_a_handler_that_only_exits():
    src = src_of(
        """\
        def add(formats, f, key):
            try:
                found = next(fo for fo in formats if fo['id'] == key)
            except StopIteration:
                info = dict(f)
                formats.append(info)
            else:
                found.update(f)
            try:
                g = int(key)
            except ValueError:
                pass
            return formats
        """
    )
    edits = list(fallback_edits(src, src.statements_touching(1, len(src.lines))))
    assert [e.new_text for e in edits] == [
        textwrap.dedent(
            """\
            def add(formats, f, key):
                info = dict(f)
                formats.append(info)
                try:
                    g = int(key)
                except ValueError:
                    pass
                return formats
            """
        )
    ]


def test_a_formatted_pattern_group_may_match_nothing():
    src = src_of("def f(s):\n    return re.match(r'^(?P<f>%s)\\((?P<a>[a-z,]+)\\)$' % NAME, s)\n")
    texts = new_texts(regex_edits(src, everything(src)))
    assert "def f(s):\n    return re.match(r'^(?P<f>%s)\\((?P<a>[a-z,]*)\\)$' % NAME, s)\n" in texts
    # an escaped bracket is text, not a class
    lit = src_of("def f(s):\n    return re.match(r'x\\]+', s)\n")
    assert not any("*" in t for t in new_texts(regex_edits(lit, everything(lit))))


def test_generation_offers_the_new_families_in_a_region():
    code = "def f(src):\n    return f'{src.name} (original)'\n"
    cands = generate_candidates([Region("m.py", 1, 2, 1.0)], {"m.py": code}, FailureHints())
    assert any(c.template == "unwrap" and "{src} (original)" in c.new_text for c in cands)


def test_an_edit_weighs_as_the_most_suspicious_region_that_proposes_it():
    code = (
        "def width(s):\n    col = 0\n    for ch in s:\n        if ch == ' ':\n"
        "            col += 1\n        else:\n            col += 4\n    return col\n"
    )
    regions = [Region("m.py", 1, 8, 0.5), Region("m.py", 7, 7, 1.0)]
    cands = generate_candidates(regions, {"m.py": code}, FailureHints())
    fix = next(c for c in cands if "col += 1\n    return" in c.new_text and "`4` -> `1`" in c.why)
    assert fix.suspiciousness == 1.0  # first made in the 0.5 region, then seen in the 1.0 one
    # the spectrum's best line weighs like a crash line
    hot = generate_candidates(regions[:1], {"m.py": code}, FailureHints(), hot_lines=[("m.py", 7)])
    fix = next(c for c in hot if "`4` -> `1`" in c.why)
    assert fix.suspiciousness == 0.75
    assert all(c.suspiciousness == 0.5 for c in hot if not c.start <= 7 <= c.end)


def test_a_loop_over_a_split_skips_the_empty_string():
    src = src_of(
        "def call(m, local):\n"
        "    args = tuple(local[v] for v in m.group('args').split(','))\n"
        "    parts = m.group('args').split(',')\n"
        "    return args, parts\n"
    )
    texts = new_texts(split_empty_edits(src, everything(src)))
    assert texts == [
        "def call(m, local):\n"
        "    args = tuple(local[v] for v in (m.group('args').split(',') if m.group('args') "
        "else []))\n"
        "    parts = m.group('args').split(',')\n"
        "    return args, parts\n"
    ]  # a split whose list is kept (not looped over) keeps its `['']`


def test_the_literals_a_failing_run_printed_point_at_the_lines_that_wrote_them():
    import ast

    code = textwrap.dedent(
        """\
        def diff_names(src):
            a = f"{src.name}  (original)"
            b = f"{src.name}  (formatted)"
            return a, b, "utf-8", "utf-8", "utf-8", "utf-8"


        def stdin_names():
            return "<stdin>  (original)", "<stdin>  (formatted)"
        """
    )
    output = (
        "E   AssertionError: '--- <stdin>  (original)\\n+++ <stdin>  (formatted)\\n' != "
        "'--- blk_1.log  (original)\\n+++ blk_1.log  (formatted)\\n' (utf-8)"
    )
    lines = printed_literal_lines([("black.py", ast.parse(code))], output)
    # rarest first: each diff-header literal once in this file; "utf-8" is too short anyway
    assert lines == [("black.py", 8), ("black.py", 3), ("black.py", 2)]
    assert printed_literal_lines([("black.py", ast.parse(code))], "") == []
