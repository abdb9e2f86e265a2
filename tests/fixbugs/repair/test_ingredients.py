"""The ingredient search: same callee elsewhere, similar statements, sibling modules."""

from __future__ import annotations

from fixbugs.repair.generate import Region, generate_candidates, pair_edits
from fixbugs.repair.hints import FailureHints
from fixbugs.repair.ingredients import IngredientIndex, ingredient_edits
from fixbugs.repair.ranking import rank
from fixbugs.repair.source import SourceFile

HEAD = "from util import replace_argument\n\n\ndef get_new_command(command):\n"
RULE_A = HEAD + "    return '{} --staged'.format(command.script)\n"
RULE_B = HEAD + "    return replace_argument(command.script, 'push', 'push --force')\n"


def test_sibling_module_with_the_same_function_offers_its_return():
    a, b = SourceFile("rules/a.py", RULE_A), SourceFile("rules/b.py", RULE_B)
    idx = IngredientIndex.of_sources([a, b])
    edits = list(ingredient_edits(a, a.nodes_in(5, 5), idx))
    assert any(
        e.new_text.endswith("return replace_argument(command.script, 'push', 'push --force')\n")
        for e in edits
    )


def test_same_callee_with_other_arguments():
    here = SourceFile("m.py", "import re\n\n\ndef f(s):\n    return re.sub('a', 'b', s)\n")
    other = SourceFile(
        "n.py", "import re\n\n\ndef g(s):\n    return re.sub('^a', 'b', s, flags=re.I)\n"
    )
    idx = IngredientIndex.of_sources([here, other])
    edits = list(ingredient_edits(here, here.nodes_in(5, 5), idx))
    assert any("re.sub('^a', 'b', s, flags=re.I)" in e.new_text for e in edits)


def test_an_ingredient_reading_names_out_of_scope_is_not_used():
    here = SourceFile("m.py", "def f(s):\n    return h(s)\n\n\ndef h(x):\n    return x\n")
    other = SourceFile("n.py", "def g(t):\n    return h(t, secret)\n")
    idx = IngredientIndex.of_sources([here, other])
    assert [e for e in ingredient_edits(here, here.nodes_in(2, 2), idx)] == []


def test_missing_import_is_added_with_the_ingredient():
    here = SourceFile("rules/c.py", "def get_new_command(command):\n    return command.script\n")
    b = SourceFile("rules/b.py", RULE_B)
    idx = IngredientIndex.of_sources([here, b])
    edits = list(ingredient_edits(here, here.nodes_in(2, 2), idx))
    assert edits
    assert any(e.new_text.startswith("from util import replace_argument\n") for e in edits)


def test_pairs_compose_two_disjoint_edits_and_rank_after_singles():
    old = "def f(a, b):\n    x = a < b\n    y = a + 1\n    return x, y\n"
    cands = generate_candidates([Region("s.py", 2, 3, 1.0)], {"s.py": old}, FailureHints())
    one = next(c for c in cands if "x = a <= b" in c.new_text and c.template != "pair")
    two = next(c for c in cands if "y = a - 1" in c.new_text and c.template != "pair")
    both = "def f(a, b):\n    x = a <= b\n    y = a - 1\n    return x, y\n"
    assert [new for _a, _b, new in pair_edits(SourceFile("s.py", old), [one, two], limit=5)] == [
        both
    ]
    assert any(c.template == "pair" for c in cands)
    first_pair = next(i for i, c in enumerate(cands) if c.template == "pair")
    assert all(c.template != "pair" for c in cands[:first_pair])
    assert all(c.template == "pair" or c.overfit_risk == "high" for c in cands[first_pair:])
    assert cands[-1].overfit_risk == "high"


def test_ranking_puts_high_risk_last_and_marks_test_literals():
    old = "def match(c):\n    return c.a == 'xx'\n"
    cands = generate_candidates([Region("r.py", 2, 2, 1.0)], {"r.py": old}, FailureHints())
    ranked = rank([c for c in cands if c.template != "pair"])
    risks = [c.overfit_risk for c in ranked]
    assert "high" in risks and "low" in risks
    first_high = risks.index("high")
    assert all(r == "high" for r in risks[first_high:])
    marked = generate_candidates(
        [Region("r.py", 2, 2, 1.0)],
        {"r.py": old},
        FailureHints(diff_plus=("xx-yy",), diff_minus=("xx",)),
        test_literals=frozenset({"xx-yy"}),
    )
    assert any(c.overfit_risk == "possible" and "'xx-yy'" in c.new_text for c in marked)
