"""``fixbugs bench models``: which (model, step) pays, from the evals' per-case outcomes."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

from agentrt._config import load_settings
from fixbugs.bench.models import (
    CANDIDATES,
    Candidate,
    CaseOutcome,
    EvalArgs,
    EvalRun,
    bench_models,
    read_eval,
    render,
)
from fixbugs.eval.run import CaseResult
from fixbugs.eval.score import LocalizationScore
from fixbugs.run.model_steps import ModelStep

DEV = Path("dev")


def _run(top1: int, *, n: int = 10, wall: float = 10.0, region: int = 0) -> EvalRun:
    return EvalRun(
        tuple(
            CaseOutcome(f"c{i}", i < top1, True, i < region, False, False, wall, wall / 2)
            for i in range(n)
        )
    )


def test_a_step_pays_only_beyond_the_spread_and_within_the_wall_limit() -> None:
    # no model: two runs, top-1 7 and 8 of 10 (a spread of 1)
    baselines = iter([_run(7), _run(8)])
    outcomes: dict[tuple[str, ModelStep], EvalRun] = {
        ("smollm2-135m", "relevance"): _run(9, wall=12.0),  # +2 > spread, 1.2x: pays
        ("smollm2-135m", "judgment"): _run(8, wall=11.0),  # +1, within the spread
        ("gemma3-270m", "relevance"): _run(10, wall=16.0),  # +3 but 1.6x the wall
        ("gemma3-270m", "judgment"): _run(9, wall=10.0, region=0),  # +2, region unchanged
    }

    def run_eval(cases: Path, cand: Candidate | None, step: ModelStep) -> EvalRun:
        assert cases == DEV and step in ("relevance", "judgment")
        return next(baselines) if cand is None else outcomes[(cand.name, step)]

    said: list[str] = []
    rows = bench_models(
        [DEV],
        ["smollm2-135m", "gemma3-270m"],
        ["relevance", "judgment"],
        baseline_runs=2,
        run_eval=run_eval,
        progress=said.append,
    )
    assert (
        len(said) == 5
        and said[1] == "dev: smollm2-135m relevance (10 cases, top-1 9, 12.0 s a case)"
    )
    got = {(r.model, r.step): r for r in rows}
    assert [k for k, r in got.items() if r.pays()] == [
        ("smollm2-135m", "relevance"),
        ("gemma3-270m", "judgment"),
    ]
    r = got[("smollm2-135m", "relevance")]
    assert (r.gain("top1"), r.spread("top1"), round(r.wall_ratio(), 2)) == (2, 1, 1.2)
    assert r.changed() == ["c7", "c8"]  # the cases whose top-1 differs from the first run
    assert r.figures == ("top1", "top5", "region")  # a localization step: no fix figure
    table = render(rows)
    assert "| dev | smollm2-135m | relevance | 9/10 (none 7, ±1) |" in table
    assert table.count("| yes |") == 2


def test_a_figure_that_falls_beyond_the_spread_does_not_pay() -> None:
    base = _run(5, region=5)

    def run_eval(cases: Path, cand: Candidate | None, step: ModelStep) -> EvalRun:
        return base if cand is None else _run(8, region=2)  # top-1 up, region down

    [row] = bench_models([DEV], ["smollm2-135m"], ["rewrite"], baseline_runs=1, run_eval=run_eval)
    assert row.figures == ("top1", "top5", "region", "reproduced", "validated")
    assert not row.pays()


def test_a_reproduce_step_pays_by_the_genuine_reproductions_it_adds() -> None:
    def reproduced(n: int) -> EvalRun:
        return EvalRun(
            tuple(
                CaseOutcome(f"c{i}", True, True, False, i < n, False, 10.0, 2.0) for i in range(10)
            )
        )

    baselines = iter([reproduced(2), reproduced(2)])

    def run_eval(cases: Path, cand: Candidate | None, step: ModelStep) -> EvalRun:
        return next(baselines) if cand is None else reproduced(4)

    [row] = bench_models([DEV], ["smollm2-135m"], ["reproduce"], baseline_runs=2, run_eval=run_eval)
    assert (row.gain("reproduced"), row.spread("reproduced"), row.changed()) == (2, 0, ["c2", "c3"])
    assert row.pays()
    assert "| 4/10 (none 2, ±0) |" in render([row])


def test_a_candidate_not_installed_is_a_line_not_a_failure() -> None:
    def run_eval(cases: Path, cand: Candidate | None, step: ModelStep) -> EvalRun:
        return _run(5) if cand is None else EvalRun((), "not installed: pip install x")

    [row] = bench_models([DEV], ["gemma3-270m"], ["relevance"], baseline_runs=1, run_eval=run_eval)
    assert not row.pays()
    assert "| dev | gemma3-270m | relevance | not installed: pip install x |" in render([row])


def test_a_candidates_config_routes_every_role_to_its_gguf(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    cfg = tmp_path / "agentrt.toml"
    cfg.write_text(CANDIDATES["gemma3-270m"].config(gguf))
    settings = load_settings(cfg, env={})
    _, ep = settings.endpoint_for("judge")
    assert (ep.kind, ep.model_path, ep.chat_format, ep.resolved_trust) == (
        "llama",
        str(gguf),
        "gemma",
        "low",
    )
    # --trust high: the same model, whose answers may overrule the evidence
    cfg.write_text(CANDIDATES["smollm2-135m"].config(gguf, "high"))
    assert load_settings(cfg, env={}).trust_for("judge") == "high"


def test_read_eval_takes_the_agents_figures_and_the_steps_stage_wall() -> None:
    # the eval's --json as `fixbugs eval` writes it: each CaseResult through asdict
    score = LocalizationScore(top1=True, top3=True, top5=True, rank=1, line_hit=False)
    miss = LocalizationScore(top1=False, top3=False, top5=False, rank=None, line_hit=False)
    result = CaseResult(
        id="thefuck-4",
        agent=["thefuck/shells/fish.py"],
        traceback_baseline=[],
        bm25_baseline=[],
        scores={"agent": score, "traceback": miss, "bm25": miss},
        reproduction_confirmed=True,
        validated=False,
        validation_detail="no patch",
        stage_s={"agent_total": 3.5, "file_relevance": 1.25, "fix": 0.5},
        notes=(),
        region_hit=True,
        root_cause=("thefuck/shells/fish.py", 19, 28),
        verdict="passes_tests",
    )

    def written(r: CaseResult) -> str:
        return json.dumps({"summary": {}, "cases": [asdict(r)]})

    [got] = read_eval(written(result), "relevance").cases
    assert got == CaseOutcome("thefuck-4", True, True, True, False, False, 3.5, 1.25)
    [fix] = read_eval(
        written(replace(result, verdict="validated", agent_validated=True)), "rewrite"
    ).cases
    assert fix.validated and fix.step_s == 0.5
    # the reproduce step's wall is the reproduction stage's; only a genuine one counts
    for kind, counted in (("genuine", True), ("environment", False)):
        said = replace(result, reproduction_kind=kind, stage_s={"reproduction": 2.5})
        [rep] = read_eval(written(said), "reproduce").cases
        assert (rep.reproduced, rep.step_s) == (counted, 2.5)


def test_every_eval_of_the_bench_gets_the_reports_the_mode_and_no_test_command(
    tmp_path: Path,
) -> None:
    out, cfg = tmp_path / "eval.json", tmp_path / "agentrt.toml"
    issues = EvalArgs(repair_budget=45.0, reports=Path("eval/pool/issues"), no_test=True)
    base = issues.argv(DEV, "relevance", None, out)
    step = issues.argv(DEV, "relevance", cfg, out)
    for argv in (base, step):  # the runs without a model and with one alike
        i = argv.index("--reports")
        assert argv[i + 1] == "eval/pool/issues" and "--no-test" in argv
        assert "--localize-only" in argv and "--repair-budget" not in argv
    assert "--no-model" in base and "--config" not in base
    assert step[step.index("--config") + 1] == str(cfg)
    assert step[step.index("--model-steps") + 1] == "relevance"
    fix = EvalArgs(repair_budget=45.0).argv(DEV, "rewrite", cfg, out)
    assert fix[fix.index("--repair-budget") + 1] == "45.0"
    assert "--reports" not in fix and "--no-test" not in fix and "--localize-only" not in fix
    assert "--mode" not in fix
    pool = EvalArgs(mode="issue").argv(DEV, "judgment", None, out)
    assert pool[pool.index("--mode") + 1] == "issue" and "--no-model" in pool


def test_mode_issue_with_other_reports_is_refused_before_any_eval(tmp_path: Path) -> None:
    import subprocess
    import sys

    argv = ["bench", "models", "--cases", str(tmp_path), "--mode", "issue", "--no-test"]
    done = subprocess.run(
        [sys.executable, "-c", "from fixbugs.cli import main; main()", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "no --reports or --no-test with it" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
