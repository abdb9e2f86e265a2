"""Each fix template on a small snippet: it proposes the repair, keeps formatting, parses."""

from __future__ import annotations

from snippetkit import everything, new_texts, src_of

from fixbugs.repair.hints import parse_hints
from fixbugs.repair.literals import literal_edits, regex_edits
from fixbugs.repair.ranking import to_candidate
from fixbugs.repair.statements import delete_edits, guard_edits, try_edits
from fixbugs.repair.templates import (
    argument_edits,
    condition_edits,
    constant_edits,
    membership_edits,
    operator_edits,
    return_edits,
)
from fixbugs.repair.variables import name_edits, swap_edits


def test_operator_replacement_keeps_the_rest_of_the_line():
    src = src_of("def f(a, b):\n    return a < b  # smaller\n")
    texts = new_texts(operator_edits(src, everything(src)))
    assert "def f(a, b):\n    return a <= b  # smaller\n" in texts
    assert "def f(a, b):\n    return a > b  # smaller\n" in texts


def test_boolean_and_arithmetic_operators():
    src = src_of("x = a + b\ny = p and q\n")
    texts = new_texts(operator_edits(src, everything(src)))
    assert "x = a - b\ny = p and q\n" in texts
    assert "x = a + b\ny = p or q\n" in texts


def test_condition_negate_is_high_risk_and_drop_conjunct_is_not():
    src = src_of("def f(s):\n    if s and s[0] == '-':\n        return 1\n")
    edits = list(condition_edits(src, everything(src) + src.statements_touching(2, 2)))
    negated = [e for e in edits if e.why == "negate the condition"]
    assert negated and negated[0].risk == "high"
    assert "not (s and s[0] == '-')" in negated[0].new_text
    dropped = [e.new_text for e in edits if e.why.startswith("drop operand")]
    assert "def f(s):\n    if s[0] == '-':\n        return 1\n" in dropped
    assert all(e.risk == "low" for e in edits if e.why.startswith("drop operand"))


def test_condition_add_conjunct_from_the_file():
    src = src_of("def f(s):\n    if s:\n        return 1\n")
    edits = list(
        condition_edits(src, src.statements_touching(2, 2), ["len(s) > 1", "func_m is None"])
    )
    assert any(e.new_text.startswith("def f(s):\n    if s and len(s) > 1:") for e in edits)
    # a name another function binds is not in scope here: it could only raise NameError
    assert not any("func_m" in e.new_text for e in edits)


def test_guard_before_failing_index_returns_false_in_a_predicate():
    src = src_of("def match(cmd):\n    return cmd.split()[1] == 'stash'\n")
    texts = new_texts(guard_edits(src, src.statements_touching(2, 2)))
    want = (
        "def match(cmd):\n    if len(cmd.split()) <= 1:\n        return False\n"
        "    return cmd.split()[1] == 'stash'\n"
    )
    assert want in texts


def test_guard_in_a_loop_can_continue():
    src = src_of("def f(xs):\n    for x in xs:\n        print(x.name)\n")
    texts = new_texts(guard_edits(src, src.statements_touching(3, 3)))
    assert any("        if x is None:\n            continue\n" in t for t in texts)


def test_try_except_wraps_the_statement_for_the_traceback_exception():
    src = src_of("def f(parts):\n    parts.pop(1)\n    return parts\n")
    texts = new_texts(try_edits(src, src.statements_touching(2, 2), ("IndexError",)))
    wrapped = "    try:\n        parts.pop(1)\n    except IndexError:\n        pass\n"
    assert "def f(parts):\n" + wrapped + "    return parts\n" in texts
    swallowed = [e for e in try_edits(src, src.statements_touching(2, 2), ("IndexError",))]
    # every handler only discards the error (pass, or an exit): each one swallows it
    assert {e.why.rsplit(", then ", 1)[1] for e in swallowed} == {"ignore it", "return None"}
    assert {e.risk for e in swallowed} == {"high"}
    cands = [to_candidate(i, e, src.text, 1.0, frozenset()) for i, e in enumerate(swallowed)]
    assert {(c.overfit_risk, c.shape and c.shape.kind) for c in cands} == {("high", "swallows")}
    # never for an exception that is not a builtin one, never a bare except
    assert list(try_edits(src, src.statements_touching(2, 2), ("MyError",))) == []


def test_name_replacement_in_scope_and_attribute_from_the_index():
    src = src_of("def f(a, b):\n    return g(a) + c.x\n")
    edits = list(name_edits(src, everything(src), {"c": {"x", "y"}}))
    texts = new_texts(edits)
    assert "def f(a, b):\n    return g(b) + c.x\n" in texts
    assert "def f(a, b):\n    return g(a) + c.y\n" in texts


def test_method_swap():
    src = src_of("ok = s.startswith('x')\n")
    assert "ok = s.endswith('x')\n" in new_texts(name_edits(src, everything(src)))


def test_argument_remove_and_swap():
    src = src_of("r = f(a, b, c=1)\n")
    texts = new_texts(argument_edits(src, everything(src)))
    assert "r = f(b, c=1)\n" in texts
    assert "r = f(b, a, c=1)\n" in texts
    assert "r = f(a, c=1)\n" in texts
    assert "r = f(a, b)\n" in texts


def test_constant_and_slice_changes():
    src = src_of("y = xs[1:3]\n")
    texts = new_texts(constant_edits(src, everything(src)))
    assert "y = xs[2:3]\n" in texts and "y = xs[1:2]\n" in texts
    assert "y = xs[:3]\n" in texts and "y = xs[1:]\n" in texts


def test_return_value_change_marks_constants_high_risk():
    src = src_of("def f(x):\n    return g(x)\n")
    edits = list(return_edits(src, everything(src)))
    assert any(e.new_text.endswith("return list(g(x))\n") and e.risk == "low" for e in edits)
    assert any(e.new_text.endswith("return None\n") and e.risk == "high" for e in edits)


def test_membership_as_prefix_test():
    src = src_of("m = 'ls' in cmd.script\n")
    texts = new_texts(membership_edits(src, everything(src)))
    assert "m = cmd.script.startswith('ls')\n" in texts
    assert "m = 'ls' in cmd.script.split()\n" in texts


def test_literal_guided_by_the_expected_value():
    out = (
        "E       AssertionError: assert 'git push --force' == 'git push --force-with-lease'\n"
        "E         - git push --force\n"
        "E         + git push --force-with-lease\n"
    )
    src = src_of("def g(c):\n    return c.replace('push', 'push --force')\n")
    hints = parse_hints(out)
    assert "--force-with-lease" in hints.wanted_tokens(src.text)
    edits = list(literal_edits(src, everything(src), hints.wanted_tokens(src.text)))
    hit = [e for e in edits if "'push --force-with-lease'" in e.new_text]
    assert hit and hit[0].literals == ("--force-with-lease",)


def test_regex_anchor_dropped():
    src = src_of("import re\nx = re.sub('^mkdir (.*)', 'mkdir -p \\\\1', s)\n")
    texts = new_texts(regex_edits(src, everything(src)))
    assert "import re\nx = re.sub('mkdir (.*)', 'mkdir -p \\\\1', s)\n" in texts


def test_delete_statement_is_high_risk():
    src = src_of("def f(x):\n    x.pop()\n    return x\n")
    edits = list(delete_edits(src, src.statements_touching(2, 2)))
    assert edits and edits[0].risk == "high"
    assert edits[0].new_text == "def f(x):\n    return x\n"


def test_hints_read_exception_and_crash_location():
    out = "thefuck/rules/x.py:8: IndexError\nE       IndexError: list index out of range\n"
    h = parse_hints(out)
    assert h.exceptions == ("IndexError",)
    assert ("thefuck/rules/x.py", 8) in h.locations


def test_swap_two_variables_read_in_the_region():
    src = src_of("def update(self, **kw):\n    conf = dict(self)\n    conf.update(kw)\n")
    texts = new_texts(swap_edits(src, everything(src)))
    assert "def update(self, **kw):\n    conf = dict(kw)\n    conf.update(self)\n" in texts
    assert not any("self(" in t or "conf = kw(self)" in t for t in texts)


def test_swaps_skip_builtins_annotations_and_far_apart_reads():
    src = src_of(
        "def f(a: str, b) -> str:\n    x = g(a, b)\n    y = 1\n    z = 2\n    w = 3\n"
        "    return h(a, IndexError)\n"
    )
    whys = [e.why for e in swap_edits(src, everything(src))]
    assert "swap `a` (line 2) and `b` (line 2)" in whys
    assert not any("`str`" in w or "`IndexError`" in w for w in whys)
    assert not any("(line 6)" in w for w in whys)  # four lines from the other reads
