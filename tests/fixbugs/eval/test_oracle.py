"""The oracle model: right answers to FixBugs' own prompts, seeded noise, and an end-to-end
run on a tiny repository where only the oracle's rewrite fixes the bug.

The oracle is agentrt's simulator with a gold-aware responder; the tests talk
to it in-process (the real OpenAI SDK over an ASGI transport), never over a
network, and assert no wall time.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from userpython import user_python

from agentrt.chunking import chunk_code
from agentrt.sim import AnswerNoise, NoisyResponder, ResponderInput, in_process_model
from fixbugs.diffs import diff_hunks, make_diff
from fixbugs.eval.gold_edits import FORMATS, GoldFix, expressible
from fixbugs.eval.oracle import OracleAnswers, OracleNoise, oracle_profile, prompt_kind
from fixbugs.eval.score import Gold
from fixbugs.inputs import load_inputs
from fixbugs.localize.regions import Region
from fixbugs.localize.relevance import RELEVANCE_SYSTEM, chunk_question, model_relevance
from fixbugs.pyenv.userenv import Interpreter
from fixbugs.repair.edits import apply_edits, parse_edits
from fixbugs.run.agent import env_for_interpreter, run_bug
from fixbugs.run.context import AgentOptions, Models
from fixbugs.stages.fix import FIX_SYSTEM
from fixbugs.stages.rootcause import JUDGE_SYSTEM, check_judgment

BUGGY = '''def median(values):
    """The middle value of ``values``."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def spread(values):
    return max(values) - min(values)
'''
FIXED = '''def median(values):
    """The middle value of ``values``."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def spread(values):
    return max(values) - min(values)
'''
TESTS = """import unittest

from stats.median import median, spread


class TestMedian(unittest.TestCase):
    def test_odd(self):
        self.assertEqual(median([3, 1, 2]), 2)

    def test_even(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_spread(self):
        self.assertEqual(spread([4, 1]), 3)
"""
REPORT = """# median() of an even number of values is wrong

`median([4, 1, 3, 2])` in stats/median.py gives 3; the median of 1, 2, 3, 4 is 2.5.

```
python -m unittest tests.test_median.TestMedian.test_even
```

```
FAIL: test_even (tests.test_median.TestMedian.test_even)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "tests/test_median.py", line 11, in test_even
    self.assertEqual(median([4, 1, 3, 2]), 2.5)
AssertionError: 3 != 2.5
```
"""
PATH = "stats/median.py"


def gold_fix() -> GoldFix:
    patch = make_diff(PATH, BUGGY, FIXED)
    hunks = tuple((h.path, h.start, h.end) for h in diff_hunks(make_diff(PATH, BUGGY, FIXED, 0)))
    return GoldFix(Gold(frozenset({PATH}), hunks, patch), {PATH: BUGGY}, {PATH: FIXED}, ())


def ask(answers: OracleAnswers, system: str, user: str, schema: bool = False) -> str:
    req = ResponderInput((("system", system), ("user", user)), 4096, {} if schema else None)
    return answers.right(req)


def test_each_prompt_kind_is_known_by_the_system_prompt_fixbugs_sets():
    assert prompt_kind(RELEVANCE_SYSTEM) == "relevance"
    assert prompt_kind(JUDGE_SYSTEM) == "judgment"
    assert prompt_kind(FIX_SYSTEM) == "rewrite"
    assert prompt_kind("You read log lines and report only what they show, briefly.") == "other"


def test_relevance_says_the_gold_files_relevant_and_only_them():
    files = {PATH: BUGGY, "stats/io.py": "def load():\n    return []\n"}
    chunk = chunk_code(list(files.items()), 4000)[0]
    answers = OracleAnswers(gold_fix(), "t")
    said = json.loads(ask(answers, RELEVANCE_SYSTEM, chunk_question(chunk), schema=True))
    assert {f["path"]: f["relevant"] for f in said["files"]} == {PATH: True, "stats/io.py": False}
    req = ResponderInput((("system", RELEVANCE_SYSTEM), ("user", chunk_question(chunk))), 99, {})
    wrong = json.loads(answers.wrong(req))
    assert {f["path"] for f in wrong["files"] if f["relevant"]} == {"stats/io.py"}


def test_the_judgment_names_the_listed_region_of_the_gold_hunk_and_passes_the_check():
    regions = [
        Region(PATH, "spread", 7, 8, 1.0, ("named in the report",)),
        Region(PATH, "median", 1, 4, 1.0, ("named in the report",)),
    ]
    # the prompt's region lines as fixbugs.stages.rootcause.region_prompt writes them
    prompt = "\n\n".join(
        f"R{i}: {r.path}, function {r.function}, lines {r.start}-{r.end} — evidence: x"
        for i, r in enumerate(regions, 1)
    )
    answer = ask(OracleAnswers(gold_fix(), "t"), JUDGE_SYSTEM, prompt)
    assert answer.startswith("R2\n")
    region, _why, rejected = check_judgment(answer, regions, {PATH: BUGGY})
    assert region == regions[1] and rejected is None


@pytest.mark.parametrize("form", FORMATS)
def test_the_rewrite_is_the_gold_fix_in_each_edit_form(form):
    answers = OracleAnswers(gold_fix(), "t", form=form)
    answer = ask(answers, FIX_SYSTEM, "fix it")
    parsed = parse_edits(answer)
    assert parsed.format == form and answers.form == form
    assert apply_edits(parsed, {PATH: BUGGY}.get).files[0].new == FIXED
    assert expressible(gold_fix()).ok


def test_a_wrong_rewrite_aims_at_another_file_and_is_refused():
    answers = OracleAnswers(gold_fix(), "t", decoys=["stats/io.py", PATH], form="search_replace")
    answer = answers.wrong(ResponderInput((("system", FIX_SYSTEM), ("user", "fix")), 4096))
    files = {PATH: BUGGY, "stats/io.py": "def load():\n    return []\n"}
    with pytest.raises(ValueError, match="SEARCH text is not in the file"):
        apply_edits(parse_edits(answer), files.get)


def test_the_noisy_oracle_answers_wrong_about_a_share_of_calls():
    answers = OracleAnswers(gold_fix(), "t", decoys=["stats/io.py"], form="function")
    noisy = NoisyResponder(answers.right, answers.wrong, AnswerNoise(0.3, 0.1, seed=1))
    req = ResponderInput((("system", FIX_SYSTEM), ("user", "fix")), 4096)
    said = [noisy(req) for _ in range(400)]
    aimed_away = sum("FUNCTION stats/io.py::" in s for s in said)
    assert abs(aimed_away / 400 - 0.3) < 0.07 and noisy.drawn["wrong"] == aimed_away


async def test_malformed_json_from_the_oracle_is_a_note_not_a_crash():
    answers = OracleAnswers(gold_fix(), "t")
    always_bad = NoisyResponder(answers.right, answers.wrong, AnswerNoise(0.0, 1.0))
    async with in_process_model(oracle_profile(None), responder=always_bad) as model:
        res = await model_relevance(model, "bug", [PATH], {PATH: BUGGY})
    assert res.evidence == () and res.failures == 1
    assert "model relevance call failed" in res.notes[0]


def test_the_noisy_profile_waits_before_the_first_token():
    assert oracle_profile(OracleNoise()).ttft_base_s == 20.0
    assert oracle_profile(None).ttft_base_s < 0.1


# -- end to end -----------------------------------------------------------------------

PY = env_for_interpreter(Interpreter(user_python(), "--python"))


@pytest.mark.needs_root
async def test_the_oracles_rewrite_becomes_the_validated_fix(tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / "stats").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "stats" / "__init__.py").write_text("")
    (repo / "stats" / "median.py").write_text(BUGGY)
    (repo / "tests" / "__init__.py").write_text("")
    (repo / "tests" / "test_median.py").write_text(TESTS)
    (tmp_path / "report.md").write_text(REPORT)
    answers = OracleAnswers(gold_fix(), "tiny", form="search_replace")
    async with in_process_model(oracle_profile(None), responder=answers.right) as model:
        report = await run_bug(
            load_inputs(tmp_path / "report.md", repo),
            # the oracle is served as a configured endpoint is: trusted high
            models=Models(map=model, judge=model, judge_trust="high", map_trust="high"),
            # one candidate: the oracle's rewrite must be ranked first to be run at all
            options=AgentOptions(
                test_env=PY.command_env(), python=PY, fix_budget_s=120, max_candidates=1
            ),
        )
    d = report.to_dict()
    assert d["validated"] is True, d["validation"]
    assert d["validation"]["summary"].startswith("validated fix (model)")
    assert "model rewrite (search_replace)" in d["validation"]["summary"]
    # the validated patch gives the gold text; the user's tree is untouched
    from fixbugs.diffs import apply_to_text

    assert apply_to_text(BUGGY, d["patch"], PATH) == FIXED
    assert (repo / "stats" / "median.py").read_text() == BUGGY
    shutil.rmtree(tmp_path / "repo")


def test_an_unlisted_insertion_is_named_by_a_code_line_beside_it_and_grounds_on_high_trust():
    # the gold fix inserts a comment and a line at a blank line of median(): the place
    # has no code of its own, so the oracle quotes its neighbour, as a strong model would
    fixed = BUGGY.replace(
        "    ordered = sorted(values)\n",
        "    ordered = sorted(values)\n\n    # the upper middle\n    ordered = ordered[:]\n",
    )
    old = BUGGY.replace("    ordered = sorted(values)\n", "    ordered = sorted(values)\n\n")
    hunks = tuple((h.path, h.start, h.end) for h in diff_hunks(make_diff(PATH, old, fixed, 0)))
    fix = GoldFix(Gold(frozenset({PATH}), hunks, make_diff(PATH, old, fixed)), {PATH: old},
                  {PATH: fixed}, ())  # fmt: skip
    listed = [Region(PATH, "spread", 8, 9, 1.0, ("named in the report",))]
    prompt = f"R1: {PATH}, function spread, lines 8-9 — evidence: x"
    answer = ask(OracleAnswers(fix, "t"), JUDGE_SYSTEM, prompt)
    assert "(not a listed region)" in answer and "``" not in answer
    region, _why, rejected = check_judgment(answer, listed, {PATH: old}, trust="high")
    assert rejected is None and region is not None
    assert (region.path, region.function) == (PATH, "median")


def test_each_case_draws_its_own_noise():
    # the draws are seeded by case and seed: cases do not share one pattern of wrong calls
    from fixbugs.eval.oracle import oracle_responder

    req = ResponderInput((("system", FIX_SYSTEM), ("user", "fix")), 4096)

    def pattern(case_id: str) -> list[bool]:
        answers = OracleAnswers(gold_fix(), case_id, decoys=["stats/io.py"], form="function")
        noisy = oracle_responder(answers, OracleNoise(malformed=0.0))
        return ["FUNCTION stats/io.py::" in noisy(req) for _ in range(12)]

    patterns = {tuple(pattern(f"case-{i}")) for i in range(8)}
    assert len(patterns) > 4
    assert pattern("case-1") == pattern("case-1")  # and each case's own draws repeat
