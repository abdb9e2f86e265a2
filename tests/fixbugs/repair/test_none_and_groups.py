"""A None item skipped, a regex group made optional, and the hints that offer them."""

from __future__ import annotations

from snippetkit import everything, new_texts, src_of

from fixbugs.pyenv.raised import frames
from fixbugs.repair.generate import Region, generate_candidates
from fixbugs.repair.hints import FailureHints, parse_hints
from fixbugs.repair.literals import key_edits, regex_edits
from fixbugs.repair.statements import none_item_edits

# pytest's long form of a crash two calls below the test (shape of a real youtube-dl run)
RUN = """\
    def test_selection(self):
>       ydl.process_ie_result(info_dict.copy())

test/test_sel.py:42:\x20
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
pkg/sel.py:20: in build
    fs = [build(s) for s in selector]
pkg/sel.py:20: in <listcomp>
    fs = [build(s) for s in selector]
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

selector = None

>   return selector.type
E   AttributeError: 'NoneType' object has no attribute 'type'

pkg/sel.py:23: AttributeError
"""


def test_the_run_s_frames_innermost_first_and_what_it_used_as_a_value():
    assert frames(RUN) == [("pkg/sel.py", 23), ("pkg/sel.py", 20), ("test/test_sel.py", 42)]
    hints = parse_hints(RUN)
    assert ("pkg/sel.py", 20) in hints.locations and ("pkg/sel.py", 23) in hints.locations
    assert hints.saw_none and not hints.saw_empty
    assert parse_hints("E   KeyError: ''\n").saw_empty
    assert not parse_hints("E   KeyError: 'x'\n").saw_empty


def test_a_comprehension_skips_none_items_only_where_the_failure_used_a_none():
    code = "def build(selector):\n    fs = [make(s) for s in selector if s]\n    return fs\n"
    src = src_of(code)
    assert new_texts(none_item_edits(src, everything(src))) == [
        "def build(selector):\n    fs = [make(s) for s in selector if s if s is not None]\n"
        "    return fs\n"
    ]
    region = [Region("m.py", 1, 3, 1.0)]
    with_none = generate_candidates(region, {"m.py": code}, FailureHints(saw_none=True))
    without = generate_candidates(region, {"m.py": code}, FailureHints())
    assert any(c.template == "none_item" for c in with_none)
    assert not any(c.template == "none_item" for c in without)


def test_a_verbose_pattern_over_several_lines_gets_an_optional_group():
    src = src_of(
        """\
        def attrs(html):
            return re.finditer(r'''(?xs)
                <([a-z]+)
                 (?:\\s+[a-z]+(?:=[a-z]*|="[^"]*"))*?
                \\s*>''', html)
        """
    )
    edits = list(regex_edits(src, everything(src)))
    texts = new_texts(edits)
    # the attribute's value may be missing (`<div itemscope>`): the inner group may match nothing
    assert any('(?:=[a-z]*|="[^"]*")?)*?' in t for t in texts)
    assert any("(line 4) may match nothing" in e.why for e in edits)
    assert {e.template for e in edits if "may match nothing" in e.why} == {"regex_loosen"}
    # verbose whitespace is no text to match, inline flags are no group, and stay first
    assert not any("\\s+\\s+" in t or "(?xs)?" in t or "'''^(?xs)" in t for t in texts)
    # a plain (not raw) literal over several lines is never rewritten
    plain = src_of("def f(s):\n    return re.match('''a+\n''', s)\n")
    assert new_texts(regex_edits(plain, everything(plain))) == []


def test_a_key_the_failing_line_reads_joins_a_literal_list_of_keys():
    out = ">       self.assertEqual(result['id'], 'x')\nE   AssertionError\n"
    out += '>   v = d.get("ext")\n'
    assert parse_hints(out).keys == ("id", "ext")
    src = src_of(
        """\
        def merge(info, outer):
            for k in ('_type', 'url'):
                outer.pop(k, None)
            kinds = ('a', 'b')
            return k in ('x', 'y'), kinds
        """
    )
    edits = list(key_edits(src, everything(src), ("id", "x")))
    texts = new_texts(edits)
    # looped over or tested for membership; a tuple merely assigned is no list of keys
    assert any("for k in ('_type', 'url', 'id'):" in t for t in texts)
    assert any("k in ('x', 'y', 'id')" in t for t in texts)
    assert not any("('a', 'b', " in t for t in texts)
    assert not any("('x', 'y', 'x')" in t for t in texts)  # a key it has already
    assert all(e.literals for e in edits)  # the tests' literal: ranking marks the risk


def test_nothing_where_a_value_was_expected_puts_the_loosened_patterns_first():
    assert parse_hints("E       AssertionError: None != 'foo'\n").got_nothing
    assert parse_hints("E       assert [] == ['a']\n").got_nothing
    assert not parse_hints("E       AssertionError: 'bar' != 'foo'\n").got_nothing
    code = "def one(s):\n    return re.match(r'^(a+)$', s)\n"
    region = [Region("m.py", 1, 2, 1.0)]
    plain = generate_candidates(region, {"m.py": code}, FailureHints())
    nothing = generate_candidates(region, {"m.py": code}, FailureHints(got_nothing=True))
    assert plain[0].template == "regex" and nothing[0].template == "regex_loosen"
