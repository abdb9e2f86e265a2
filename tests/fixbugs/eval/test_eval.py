import json
from dataclasses import asdict
from pathlib import Path

import pytest
from evalkit import calc_case, pytest_report
from userpython import user_python

import fixbugs.eval.score
from fixbugs.errors import InputError
from fixbugs.eval.case import AgentOutput, Case
from fixbugs.eval.run import load_cases, read_tree, run_eval, summarize
from fixbugs.eval.score import Gold, score_localization, validate_patch
from fixbugs.localize import RankedFile
from fixbugs.pyenv.testenv import env_key

DEV = Path(__file__).resolve().parents[3].parent / "shared" / "bugs" / "dev"

REPORT = pytest_report(4)


def make_case(root: Path, name: str = "calc-1") -> Path:
    files = {
        "calc/__init__.py": "",
        "calc/ops.py": "def add(a, b):\n    return a - b\n",
        "calc/other.py": "def mul(a, b):\n    return a * b\n",
        "tests/test_calc.py": (
            "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
        ),
    }
    return calc_case(root, files, REPORT, name=name)


def test_localization_score_hits_at_1_3_5_and_line_overlap():
    gold = Gold(frozenset({"b.py"}), (("b.py", 10, 12),), "")
    s = score_localization(["a.py", "./b.py"], gold, {"b.py": [(12, 14)]})
    assert (s.top1, s.top3, s.top5, s.rank, s.line_hit) == (False, True, True, 2, True)
    s = score_localization(["a", "c", "d", "e", "f", "b.py"], gold, {"b.py": [(1, 9)]})
    assert (s.top3, s.top5, s.rank, s.line_hit) == (False, False, 6, False)
    assert score_localization([], gold).rank is None


def test_load_cases_errors_are_one_line_input_errors(tmp_path: Path):
    with pytest.raises(InputError, match="no case folders"):
        load_cases(tmp_path)
    with pytest.raises(InputError, match="not a folder"):
        load_cases(tmp_path / "missing")
    make_case(tmp_path, "calc-2")
    make_case(tmp_path, "calc-10")
    assert [c.id for c in load_cases(tmp_path)] == ["calc-2", "calc-10"]  # numeric order
    with pytest.raises(InputError, match="--case nope"):
        load_cases(tmp_path, case_id="nope")


def test_read_tree_skips_binaries_caches_and_vcs(tmp_path: Path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2")
    for d in (".git", "__pycache__"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "f.py").write_text("x")
    assert read_tree(tmp_path) == {"a.py": "x = 1\n"}


async def test_eval_scores_only_after_the_agent_and_the_agent_never_sees_gold(
    tmp_path, monkeypatch
):
    make_case(tmp_path)
    order: list[str] = []
    real_load_gold = fixbugs.eval.score.load_gold

    def spy_load_gold(case_dir: Path):
        order.append("gold")
        return real_load_gold(case_dir)

    monkeypatch.setattr(fixbugs.eval.score, "load_gold", spy_load_gold)

    async def agent(case: Case, tree: Path, python_bin: Path) -> AgentOutput:
        order.append("agent")
        assert "gold" not in case.report and not (tree / "gold.json").exists()
        assert (tree / "calc" / "ops.py").exists()
        return AgentOutput(
            (
                RankedFile("calc/other.py", 2.0, ("x",)),
                RankedFile("calc/ops.py", 1.0, ("y",), ((2, 2),)),
            ),
            None,
            True,
            {"sbfl": 0.5},
            sbfl_ran=True,
        )

    results = await run_eval(
        load_cases(tmp_path), agent=agent, python_env=lambda py, reqs: user_python().parent
    )
    assert order == ["agent", "gold"]
    [r] = results
    assert r.scores["agent"].rank == 2 and r.scores["agent"].line_hit
    assert r.validated is False and r.validation_detail == "no patch"
    assert r.scores["bm25"].top1  # "add" and "calc" point BM25 at calc/ops.py
    assert r.scores["traceback"].rank is None  # only a test frame: no project frame to rank
    s = summarize(results)
    assert asdict(s.localization["agent"]) == {
        "top1": 0.0,
        "top3": 1.0,
        "top5": 1.0,
        "line_hit": 1.0,
    }
    assert s.reproduction_confirmed == 1 and s.validated_fixes == 0
    assert r.sbfl_ran and s.sbfl_ran == 1  # the agent's SBFL gave evidence


async def test_validation_rejects_a_patch_that_does_not_apply(tmp_path: Path):
    case = make_case(tmp_path)
    res = await validate_patch(
        case, "--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n", user_python().parent
    )
    assert not res.validated and not res.applied


def _dev_env() -> Path | None:
    from fixbugs.pyenv.testenv import cached_env

    case = DEV / "thefuck-9" / "case.json"
    if not case.exists():
        return None
    meta = json.loads(case.read_text())
    return cached_env(meta["python"], meta["requirements"])


@pytest.mark.skipif(
    _dev_env() is None, reason="needs ../shared/bugs/dev and its cached Python 3.8 env"
)
async def test_end_to_end_on_one_real_case_and_the_scorer_checks_fixes_for_real():
    """A real BugsInPy case: localized; the gold patch validates, a no-op patch does not."""
    env = _dev_env()
    assert env is not None and env_key("3.8", [], []).startswith("py3.8-")
    cases = load_cases(DEV, case_id="thefuck-9")
    [r] = await run_eval(cases, python_env=lambda py, reqs: env)
    assert r.reproduction_confirmed is True
    assert r.scores["agent"].top3
    gold = fixbugs.eval.score.load_gold(DEV / "thefuck-9")
    assert (await validate_patch(DEV / "thefuck-9", gold.patch, env)).validated
    first = sorted(gold.files)[0]
    noop = f"--- a/{first}\n+++ b/{first}\n@@ -1,0 +1,1 @@\n+# touched\n"
    res = await validate_patch(DEV / "thefuck-9", noop, env)
    assert res.applied and not res.validated and not res.fail_to_pass
