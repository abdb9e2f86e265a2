"""Change shapes: swallowing the exception, negating a whole condition, returning a constant.

Each positive is a change that makes a failing test pass without fixing the
failing path; each negative is a change of the same neighbourhood that is a
real fix and must not be called one of those shapes.
"""

from __future__ import annotations

import textwrap

import pytest

from fixbugs.diffs import apply_to_text, make_diff
from fixbugs.repair.ranking import RepairCandidate, rank, to_candidate, with_shape
from fixbugs.repair.shapes import ChangeShape, classify_change, classify_diff
from fixbugs.repair.source import Edit
from fixbugs.repair.summary import PassedCandidate


def d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def wrapped(text: str, line: str, handler: str, exc: str = "KeyError") -> str:
    """``text`` with ``line`` (a whole line, its indent in) in ``try/except exc: handler``."""
    indent = line[: len(line) - len(line.lstrip())]
    block = f"{indent}try:\n    {line}{indent}except {exc}:\n{indent}    {handler}\n"
    assert line in text
    return text.replace(line, block)


def kind(old: str, new: str) -> str | None:
    shape = classify_change(d(old), d(new))
    if shape is not None:
        assert shape.reason and "\n" not in shape.reason  # one line, always
    return shape.kind if shape else None


LOOKUP = """
    def get(d, key):
        value = d[key]
        return value.strip()
"""

# -- swallows ------------------------------------------------------------------


@pytest.mark.parametrize(
    "handler",
    [
        "pass",
        "return",
        "return None",
        "return ''",
        "return []",
        "return {}",
        "return -1",
        "...",
        "log.warning('no key %s', key)",
        "logger.exception('lookup failed')\n            return None",
        "print('missing')",
        "sys.stderr.write('missing')",
        "traceback.print_exc()",
    ],
)
def test_a_try_around_existing_code_whose_handler_discards_swallows(handler: str):
    new = f"""
    def get(d, key):
        try:
            value = d[key]
        except KeyError:
            {handler}
        return value.strip()
    """
    assert kind(LOOKUP, new) == "swallows"


def test_the_handler_may_discard_any_exception_even_bare():
    for head in ("except:", "except Exception:", "except (KeyError, TypeError):"):
        new = f"""
        def get(d, key):
            try:
                value = d[key]
                return value.strip()
            {head}
                return None
        """
        assert kind(LOOKUP, new) == "swallows", head


def test_continue_and_break_in_a_loop_swallow():
    old = """
    def total(rows):
        n = 0
        for r in rows:
            n += int(r)
        return n
    """
    for exit_ in ("continue", "break"):
        new = f"""
        def total(rows):
            n = 0
            for r in rows:
                try:
                    n += int(r)
                except ValueError:
                    {exit_}
            return n
        """
        shape = classify_change(d(old), d(new))
        assert shape is not None and shape.kind == "swallows"
        assert "line 4" in shape.reason and "ValueError" in shape.reason


def test_contextlib_suppress_around_existing_code_swallows():
    for head in ("contextlib.suppress(KeyError)", "suppress(Exception)"):
        new = f"""
        def get(d, key):
            value = ''
            with {head}:
                value = d[key]
            return value.strip()
        """
        assert kind(LOOKUP, new) == "swallows", head


def test_an_existing_handler_widened_or_rewritten_to_discard_swallows():
    old = d("""
    def parse(xs):
        out = []
        for x in xs:
            try:
                out.append(int(x))
            except ValueError:
                raise BadInput(x)
        return out
    """)
    widened = old.replace("ValueError:", "(ValueError, TypeError):").replace(
        "raise BadInput(x)", "pass"
    )
    assert kind(old, widened) == "swallows"
    rewritten = old.replace("raise BadInput(x)", "continue")
    shape = classify_change(d(old), d(rewritten))
    assert shape is not None and shape.kind == "swallows"
    assert "changes the handler at line 6" in shape.reason
    added = old.replace(
        "            raise BadInput(x)\n",
        "            raise BadInput(x)\n        except Exception:\n            return []\n",
    )
    shape = classify_change(d(old), d(added))
    assert shape is not None and shape.kind == "swallows" and "adds except" in shape.reason


def test_a_try_stretched_over_more_existing_code_swallows():
    old = """
    def load(path):
        try:
            f = open(path)
        except OSError:
            return None
        return f.read()
    """
    new = """
    def load(path):
        try:
            f = open(path)
            return f.read()
        except OSError:
            return None
    """
    assert kind(old, new) == "swallows"


def test_swallowing_is_found_in_a_model_rewrite_that_changes_the_wrapped_line_too():
    new = """
    def get(d, key):
        try:
            value = d[key.lower()]
        except KeyError:
            return None
        return value.strip()
    """
    assert kind(LOOKUP, new) == "swallows"


# -- handling the error is not swallowing it -----------------------------------


@pytest.mark.parametrize(
    "handler",
    [
        "raise LookupError(key) from None",  # re-raises a different exception
        "raise",
        "value = d[key.lower()]",  # real logic: another lookup
        "value = default",  # a fallback the caller chose
        "return default",
        "return fallback(key)",
        "log.warning('no key'); raise",
    ],
)
def test_a_try_whose_handler_handles_the_error_does_not_swallow(handler: str):
    new = f"""
    def get(d, key, default=''):
        try:
            value = d[key]
        except KeyError:
            {handler}
        return value.strip()
    """
    assert kind(LOOKUP, new) is None


def test_a_try_around_new_code_only_does_not_swallow():
    old = """
    import json

    def dump(x):
        return json.dumps(x)
    """
    new = """
    import json
    try:
        import simplejson
    except ImportError:
        simplejson = None

    def dump(x):
        return json.dumps(x)
    """
    assert kind(old, new) is None


def test_a_try_that_discarded_before_and_still_does_is_no_new_swallowing():
    old = """
    def load(path):
        try:
            f = open(path)
        except OSError:
            return None
        return f.read()
    """
    new = old.replace("open(path)", "open(path, encoding='utf-8')")
    assert kind(old, new) is None
    # its handler now logs too: it discarded this error before, it still does
    logs = old.replace("return None\n", "log.info('no file')\n            return None\n")
    assert kind(old, logs) is None


# -- negates_condition ---------------------------------------------------------

BRANCH = """
    def price(qty, items):
        if qty > 10 and items:
            return 1
        else:
            return 2
"""


def test_wrapping_or_unwrapping_a_whole_condition_in_not_negates_it():
    assert kind(BRANCH, BRANCH.replace("if qty > 10 and items", "if not (qty > 10 and items)")) == (
        "negates_condition"
    )
    old = BRANCH.replace("if qty > 10 and items", "if not items")
    assert kind(old, BRANCH.replace("if qty > 10 and items", "if items")) == "negates_condition"
    loop = "def f(q):\n    while q:\n        q.pop()\n"
    assert kind(loop, loop.replace("while q", "while not q")) == "negates_condition"


def test_negating_an_assert_a_conditional_or_a_returned_condition():
    assert kind("def f(x):\n    assert x\n", "def f(x):\n    assert not x\n") == "negates_condition"
    assert kind(
        "def f(x):\n    return 1 if x else 2\n", "def f(x):\n    return 1 if not x else 2\n"
    ) == ("negates_condition")
    shape = classify_change("def f(a):\n    return a == 1\n", "def f(a):\n    return not a == 1\n")
    assert shape is not None and shape.kind == "negates_condition"
    assert "returned condition at line 2" in shape.reason


def test_swapping_the_branches_of_an_if_negates_its_condition():
    new = BRANCH.replace("return 1", "return @").replace("return 2", "return 1")
    assert kind(BRANCH, new.replace("return @", "return 2")) == "negates_condition"


def test_changing_one_operator_or_part_of_a_condition_is_not_negating_it():
    assert kind(BRANCH, BRANCH.replace("qty > 10", "qty >= 10")) is None
    assert kind(BRANCH, BRANCH.replace("qty > 10", "qty < 10")) is None
    assert kind(BRANCH, BRANCH.replace("qty > 10 and", "qty > 10 or")) is None
    assert (
        kind(BRANCH, BRANCH.replace("if qty > 10 and items", "if not qty > 10 and items")) is None
    )
    assert kind("def f(a):\n    return a == 1\n", "def f(a):\n    return a != 1\n") is None
    # a negated argument is not a negated condition
    assert kind("def f(a):\n    return g(a)\n", "def f(a):\n    return g(not a)\n") is None


# -- returns_constant ----------------------------------------------------------


def test_returning_a_constant_instead_of_the_computed_value():
    shape = classify_change(d(LOOKUP), d(LOOKUP).replace("return value.strip()", "return ''"))
    why = "replaces return value.strip() with return '' at line 3"
    assert shape == ChangeShape("returns_constant", why)
    for const in ("None", "False", "0", "[]", "{}", "dict()", "(1, 2)", "-1", "'ok'"):
        assert kind(LOOKUP, d(LOOKUP).replace("value.strip()", const)) == "returns_constant", const


def test_a_body_or_the_failing_path_replaced_or_cut_short_by_return_constant():
    assert kind(LOOKUP, "def get(d, key):\n    return None\n") == "returns_constant"
    cut = "def get(d, key):\n    return ''\n    value = d[key]\n    return value.strip()\n"
    assert kind(LOOKUP, cut) == "returns_constant"
    old = """
    def check(x):
        if x < 0:
            raise ValueError(x)
        return x
    """
    assert kind(old, d(old).replace("raise ValueError(x)", "return 0")) == "returns_constant"


def test_a_guard_a_changed_literal_or_a_changed_expression_is_not_returning_a_constant():
    guard = """
    def get(d, key):
        if key not in d:
            return None
        value = d[key]
        return value.strip()
    """
    assert kind(LOOKUP, guard) is None
    assert kind("def f():\n    return 1\n", "def f():\n    return 2\n") is None
    assert kind(LOOKUP, d(LOOKUP).replace("value.strip()", "value.rstrip()")) is None
    # a function that fell through now says what it returns at its end
    old = "def f(x):\n    if x:\n        return True\n"
    assert kind(old, old + "    return False\n") is None


# -- any candidate: whole files, diffs, big files --------------------------------


def test_unrelated_edits_and_unparsable_text_have_no_shape():
    assert classify_change(d(LOOKUP), d(LOOKUP)) is None
    assert classify_change(d(LOOKUP), d(LOOKUP).replace("d[key]", "d.get(key)")) is None
    assert classify_change(d(LOOKUP), "def get(d, key:\n    pass\n") is None


def test_the_change_is_judged_where_it_is_in_a_big_file():
    one = "def f{}(x):\n    if x:\n        return x + {}\n    return -x\n\n\n"
    filler = "".join(one.format(i, i) for i in range(300))
    old = filler + d(LOOKUP) + "\n\n" + filler
    new = old.replace(
        "    value = d[key]\n",
        "    try:\n        value = d[key]\n    except KeyError:\n        pass\n",
    )
    shape = classify_change(old, new)
    assert shape is not None and shape.kind == "swallows"
    assert f"line {filler.count(chr(10)) + 2}" in shape.reason  # the new file's own line
    assert classify_change(old, old.replace("return x + 7\n", "return x + 8\n")) is None


def test_a_module_level_change_is_judged_on_the_whole_file():
    old = "import os\nPATH = os.environ['P']\n"
    new = "import os\ntry:\n    PATH = os.environ['P']\nexcept KeyError:\n    pass\n"
    assert kind(old, new) == "swallows"


def test_a_diff_is_judged_file_by_file():
    files = {"pkg/a.py": d(LOOKUP), "pkg/b.py": "def g(x):\n    return x + 1\n"}
    swallow = wrapped(d(LOOKUP), "    value = d[key]\n", "return None")
    b2 = "def g(x):\n    return x + 2\n"
    diff = make_diff("pkg/b.py", files["pkg/b.py"], b2) + make_diff("pkg/a.py", d(LOOKUP), swallow)
    shape = classify_diff(diff, files)
    assert shape is not None and shape.kind == "swallows"
    assert classify_diff(make_diff("pkg/b.py", files["pkg/b.py"], b2), files) is None
    # a file it does not know, or hunks that do not apply, are not judged
    assert classify_diff(diff, {"pkg/b.py": files["pkg/b.py"]}) is None
    assert classify_diff(diff, {"pkg/a.py": "other text\n"}) is None


def test_apply_to_text_applies_hunks_with_an_offset_and_refuses_a_mismatch():
    old = "".join(f"line {i}\n" for i in range(1, 21))
    new = old.replace("line 5\n", "line five\n").replace("line 15\n", "line 15\nextra\n")
    diff = make_diff("m.txt", old, new)
    assert apply_to_text(old, diff, "m.txt") == new
    assert apply_to_text("zero\n" + old, diff, "m.txt") == "zero\n" + new  # found one line later
    assert apply_to_text(old.replace("line 4\n", "LINE 4\n"), diff, "m.txt") is None
    assert apply_to_text(old, diff, "other.txt") is None
    # no newline at the end of either side
    a, b = "x = 1\ny = 2", "x = 1\ny = 3"
    assert apply_to_text(a, make_diff("m.py", a, b), "m.py") == b
    assert apply_to_text(a + "\n", make_diff("m.py", a + "\n", b), "m.py") == b


# -- ranking: such a candidate is high risk and goes last ---------------------


def _edit(new: str, template: str) -> Edit:
    return Edit("m.py", 2, 2, new, template, template)


def test_a_candidate_with_a_shape_is_high_risk_and_ranks_after_every_other():
    old = d(LOOKUP)
    swallow = wrapped(old, "    value = d[key]\n", "return None")
    real = old.replace("d[key]", "d.get(key, '')")
    delete = old.replace("    value = d[key]\n", "")
    # the model's swallowing rewrite has the best prior and suspiciousness of all
    a = to_candidate(0, _edit(swallow, "model"), old, 1.0, frozenset())
    b = to_candidate(1, _edit(real, "arguments"), old, 0.2, frozenset())
    deletion = Edit("m.py", 2, 2, delete, "delete", "delete", risk="high")
    c = to_candidate(2, deletion, old, 1.0, frozenset())
    assert a.shape is not None and a.shape.kind == "swallows" and a.overfit_risk == "high"
    assert a.looks_overfit and not a.ends_search
    assert b.shape is None and b.ends_search and not c.ends_search and not c.looks_overfit
    assert [x.id for x in rank([a, b, c])] == [1, 2, 0]
    row = PassedCandidate.of(a, None)  # as the report's repair record lists it
    assert row.shape == "swallows" and "try/except KeyError" in str(row.shape_reason)


def test_a_callers_diff_gets_its_shape_when_validation_judges_it():
    old = d(LOOKUP)
    swallow = wrapped(old, "    value = d[key]\n", "pass")
    c = RepairCandidate.from_diff(7, make_diff("m.py", old, swallow), "caller", "wrap it")
    assert c.shape is None and c.overfit_risk == "low"  # nobody judged it yet
    judged = with_shape(c, {"m.py": old})
    assert judged.shape is not None and judged.shape.kind == "swallows"
    assert judged.overfit_risk == "high" and judged.id == 7 and judged.diff == c.diff
    fixed = make_diff("m.py", old, old.replace("[key]", ".get(key, '')"))
    real = RepairCandidate.from_diff(8, fixed, "caller", "use get")
    assert with_shape(real, {"m.py": old}) is real
