"""The run report, as JSON (for machines) and markdown (for people).

The report *is* :class:`fixbugs.run.report_schema.ReportModel`, built once
by :func:`build_report` from the run's :class:`~fixbugs.run.record.BugRun`
at its end: ``fixbugs run --json`` writes
it, ``fixbugs schema`` prints its JSON Schema, the service answers with it
and the eval reads it back. Every figure comes from the run's own records: stage
walls from the driver, model figures from the metrics recorder.
Its ``verdict`` (:class:`~fixbugs.repair.verdict.VerdictLevel`) is
``validated`` only when the fix passed the tests and every check;
``passes_tests`` lists each failed check in one line; ``validated`` (a bool,
for older readers) is true at ``validated`` only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrt.flow import SpendSnapshot
from agentrt.metrics import CallRecord
from fixbugs.inputs.inert import md_code, md_fence, md_text, quote_name, strip_controls
from fixbugs.repair.render import repair_markdown
from fixbugs.repair.verdict import FailedCheck, VerdictLevel
from fixbugs.run.preflight import model_failures
from fixbugs.run.record import BugRun
from fixbugs.run.report_schema import (
    REPORT_VERSION,
    CheckItem,
    CostItem,
    EnvironmentItem,
    EventItem,
    EvidenceItem,
    ModelCalls,
    OverfittingItem,
    RankedFileItem,
    RegionItem,
    ReportModel,
    ReproductionItem,
    RootCauseItem,
    StageFigures,
    ValidationItem,
)
from fixbugs.sandbox.untrusted import write_output

if TYPE_CHECKING:
    from fixbugs.pyenv.userenv import TestEnv

__all__ = ["ORACLE", "ORACLE_LINE", "RunReport", "build_report", "verdict_line"]

# Where "validated" comes from (issue 21, item 8): the repository's own tests,
# which FixBugs runs but does not judge.
ORACLE = "repository_tests"
ORACLE_LINE = (
    "Validated means the bug's failing tests now pass, the changed module's and its "
    "package's tests that passed still pass, and the change has none of the shapes that "
    "hide a failure or change what else the code does. FixBugs does not judge the "
    "repository's tests: a weak or hostile suite can still pass a wrong patch. "
    "Read the diff before applying it."
)
PASSES_LINE = (
    "Not validated: the tests pass, but the checks above do not hold. "
    "`fixbugs run --apply` applies it only with `--force`."
)


@dataclass(frozen=True, slots=True)
class RunReport:
    """A finished run's report: its published model, and the markdown a person reads."""

    model: ReportModel

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunReport:
        """A report read back from its JSON; raises if it strays from the schema."""
        return cls(ReportModel.model_validate(data))

    @property
    def validated(self) -> bool:
        return self.model.validated

    def to_dict(self) -> dict[str, Any]:
        """The JSON document as a JSON-able dict (the queue's and the service's edge)."""
        return self.model.model_dump(mode="json")

    def to_json(self) -> str:
        """The JSON document ``fixbugs run --json`` writes; its schema is ``fixbugs schema``."""
        return self.model.model_dump_json(indent=2) + "\n"

    def write_json(self, path: str | Path) -> None:
        """Write :meth:`to_json` at ``path``, never through a link planted there."""
        write_output(Path(path), self.to_json().encode(), what="--json")

    def write_markdown(self, path: str | Path) -> None:
        """Write :meth:`markdown` at ``path``, never through a link planted there."""
        write_output(Path(path), self.markdown().encode(), what="--markdown")

    def markdown(self) -> str:
        """The report for a person; what the repository wrote in it adds no structure.

        Every string of the repository, the bug report or a test's output goes
        through :mod:`fixbugs.inputs.inert`: one line, markdown escaped, code
        in spans and fences that its own backticks cannot close, file names
        quoted when they hold a newline. The document holds no control
        character but newline and tab.
        """
        d = self.to_dict()
        out = [f"# FixBugs report: {md_text(d['title'])}", ""]
        out.append(
            f"Total {d['total_s']:.1f} s; first hypothesis after "
            + (f"{d['first_hypothesis_s']:.1f} s." if d["first_hypothesis_s"] is not None else "-.")
        )
        out += ["", "## Verdict", ""]
        if d.get("degraded"):  # first line: the model failed during the run
            out += [f"**{md_text(d['verdict_head'])}**; the result stands on static evidence.", ""]
        if d["reproduction"].get("status") in ("could_not_run", "passes", "none"):
            out += ["The bug was not reproduced.", ""]
        elif d["reproduction"].get("sbfl_skipped"):
            why = md_text(d["reproduction"]["sbfl_skipped"])
            out += [f"SBFL did not run ({why}): the root cause stands on static evidence.", ""]
        summary = md_text(d["validation"]["summary"])
        level = self.model.verdict
        if level == VerdictLevel.VALIDATED:
            out += [f"**Validated fix** — {summary}.", "", ORACLE_LINE]
        elif level == VerdictLevel.PASSES_TESTS:
            out += [f"**Passes tests, not validated** — {summary}.", ""]
            out += [f"- it {md_text(FailedCheck(c.kind, c.why).line())}"
                    for c in self.model.validation.failed_checks]  # fmt: skip
            out += ["", PASSES_LINE]
        else:
            out.append(f"**No validated fix.** {summary}.")
        out += repair_markdown(self.model.repair)
        rc = d["root_cause"]
        out += ["", "## Root cause", ""]
        if rc:
            a, b = rc["lines"]
            fn = f" in {md_code(rc['function'])}" if rc.get("function") else ""
            out.append(
                f"{_path(rc['path'])}{fn} lines {a}-{b} ({md_text(rc['origin'])}): "
                + md_text(rc["explanation"])
            )
        else:
            out.append("Not determined.")
        if d.get("suspicious_regions"):
            out += ["", "| # | region | score | evidence |", "|---|---|---|---|"]
            for i, r in enumerate(d["suspicious_regions"], 1):
                fn = f" {md_code(r['function'], in_table=True)}" if r["function"] else ""
                where = f"{_path(r['path'], in_table=True)}{fn} {r['lines'][0]}-{r['lines'][1]}"
                out.append(f"| {i} | {where} | {r['score']:.3f} | {_reasons(r['reasons'][:2])} |")
        out += ["", "## Ranked files", "", "| # | file | score | reasons |", "|---|---|---|---|"]
        for i, f in enumerate(d["ranked_files"][:10], 1):
            out.append(
                f"| {i} | {_path(f['path'], in_table=True)} | {f['score']:.3f} | "
                f"{_reasons(f['reasons'][:3])} |"
            )
        rep = d["reproduction"]
        out += ["", "## Reproduction", ""]
        if d.get("environment"):
            env = d["environment"]
            pytest = f"pytest {md_text(env['pytest'])}" if env["pytest"] else "no pytest"
            out += [
                f"Tests ran with Python {md_text(env['version'])} at {_path(env['python'])} "
                f"({md_text(env['source'])}), {pytest}.",
                "",
            ]
        label = (
            "Could not run"
            if rep.get("status") == "could_not_run"
            else ("Confirmed" if rep["confirmed"] else "Not confirmed")
        )
        # a snippet's command is its gate (the script, encoded): the script is what a person reads
        shown = "the report's code, below" if rep.get("script") else md_code(rep["command"] or "-")
        out.append(f"{label} ({md_text(rep['origin'])}): {shown} — " + md_text(rep["summary"]))
        if rep.get("script"):
            out += ["", *md_fence(rep["script"].rstrip("\n"), "python")]
        if rep.get("status") == "could_not_run" and rep.get("output_tail"):
            out += ["", *md_fence(rep["output_tail"])]
        if d["patch"]:
            out += ["", "## Patch", "", *md_fence(d["patch"].rstrip(), "diff")]
        out += [
            "",
            "## Stages",
            "",
            "| stage | wall s | TTFT s | in tok | out tok | cost $ | model attempts | tool calls "
            "| failures |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for name, s in d["stages"].items():
            ttft = "-" if s["ttft_s"] is None else f"{s['ttft_s']:.2f}"
            out.append(
                f"| {name} | {s['wall_s']:.2f} | {ttft} | {s['input_tokens']} | "
                f"{s['output_tokens']} | {_dollars(s['cost_usd'])} | "
                f"{s['model_attempts']} | {s['tool_calls']} | {s['failures']} |"
            )
        out += _cost_lines(self.model.cost)
        if d["notes"]:
            out += ["", "## Notes", ""] + [f"- {md_text(n, starts_line=True)}" for n in d["notes"]]
        # invariant: no control character reaches a reader, whatever a field held
        return strip_controls("\n".join(out) + "\n")


def verdict_line(model: ReportModel) -> str:
    """The verdict in one line, as the terminal prints it after the report."""
    level = model.verdict
    if level == VerdictLevel.PASSES_TESTS:
        failed = "; ".join(
            FailedCheck(c.kind, c.why).line() for c in model.validation.failed_checks
        )
        return f"verdict: passes tests (not validated): {failed}"
    return f"verdict: {level.label}"


def _checks(failed: Sequence[FailedCheck]) -> list[CheckItem]:
    return [CheckItem(kind=c.kind, why=c.why) for c in failed]


def _dollars(usd: float | None) -> str:
    return "-" if usd is None else f"{usd:.6f}"


def _cost_lines(cost: CostItem | None) -> list[str]:
    """The run's model spend, and its budget, under the stage table."""
    if cost is None:
        return []
    dollars = "no price configured" if cost.cost_usd is None else f"${cost.cost_usd:.6f}"
    line = f"Model tokens: {cost.input_tokens} in, {cost.output_tokens} out; cost {dollars}"
    limits = [f"${cost.max_cost_usd:.6g}"] if cost.max_cost_usd is not None else []
    limits += [f"{cost.max_tokens} tokens"] if cost.max_tokens is not None else []
    if limits:
        line += f" of a budget of {' and '.join(limits)}"
    line += "."
    if cost.reached:
        cut = ", ".join(f"{stage} {n}" for stage, n in sorted(cost.cut.items()))
        line += (
            f" Budget reached ({cost.refused_calls} call(s) not started{': ' if cut else ''}{cut})."
        )
    return ["", line]


def _path(path: str, *, in_table: bool = False) -> str:
    """A repository path as inline code, quoted when it holds a newline or a control."""
    return md_code(quote_name(path), in_table=in_table)


def _reasons(reasons: list[str]) -> str:
    return "; ".join(md_text(r) for r in reasons)


def _stage_figures(
    name: str, wall: float, records: Sequence[CallRecord], spend: SpendSnapshot | None = None
) -> StageFigures:
    mine = [r for r in records if r.stage == name]
    model = [r for r in mine if r.kind == "model"]
    ttfts = [r.ttft_s for r in model if r.ttft_s is not None]
    spent = spend.stages.get(name) if spend is not None else None
    cost = spent.cost_usd if spent is not None else None
    return StageFigures(
        wall_s=round(wall, 3),
        ttft_s=round(min(ttfts), 3) if ttfts else None,
        input_tokens=sum(r.input_tokens for r in model),
        output_tokens=sum(r.output_tokens for r in model),
        cost_usd=round(cost, 6) if cost is not None else None,
        model_calls=len(model),
        tool_calls=len(mine) - len(model),
        # requests sent by the model calls (retries in); tool calls send none
        attempts=None,  # older reports; a run counts its model calls' attempts below
        model_attempts=sum(r.attempts for r in model),
        failures=sum(1 for r in mine if r.outcome == "error"),
    )


def _cost(spend: SpendSnapshot | None, records: Sequence[CallRecord]) -> CostItem:
    """The run's tokens (from its call records), dollars and budget (from its spend budget)."""
    model = [r for r in records if r.kind == "model"]
    total = spend.total.cost_usd if spend is not None else None
    return CostItem(
        input_tokens=sum(r.input_tokens for r in model),
        output_tokens=sum(r.output_tokens for r in model),
        cost_usd=round(total, 6) if total is not None else None,
        max_cost_usd=spend.max_cost_usd if spend is not None else None,
        max_tokens=spend.max_tokens if spend is not None else None,
        reached=spend.reached if spend is not None else None,
        refused_calls=spend.refused if spend is not None else 0,
        cut=dict(spend.cut) if spend is not None else {},
    )


def build_report(
    run: BugRun,
    *,
    title: str,
    environment: TestEnv | None,
    total_s: float,
    critical_path: Sequence[str] = (),
) -> RunReport:
    """The whole report of the finished ``run``, built once: nothing is added to it afterwards.

    Stage figures come from ``run.walls`` and ``run.records``; ``title`` is
    the bug report's, ``environment`` the interpreter the tests ran with.
    """
    v = run.validation
    rep = run.reproduction
    records = run.records
    failures = model_failures(records)
    rc = run.root_cause
    model = ReportModel(
        title=title,
        ranked_files=[
            RankedFileItem(
                path=f.path,
                score=round(f.score, 4),
                reasons=list(f.reasons),
                lines=[(a, b) for a, b in f.lines],
            )
            for f in run.ranked
        ],
        root_cause=RootCauseItem.model_validate(rc.to_dict()) if rc else None,
        suspicious_regions=[RegionItem.model_validate(r.to_dict()) for r in run.regions],
        version=REPORT_VERSION,
        patch=v.candidate.diff if v and v.candidate else None,
        validated=bool(v and v.validated),
        verdict=v.level if v else VerdictLevel.NO_FIX,
        validation=ValidationItem(
            summary=v.summary if v else "not run",
            tried=v.tried if v else 0,
            rejected=list(v.rejected[:20]) if v else [],
            oracle=ORACLE,
            overfitting=[
                OverfittingItem(
                    id=c.id,
                    path=c.path,
                    line=c.start,
                    template=c.template,
                    why=c.why,
                    shape=c.shape.kind if c.shape else "",
                    diff=c.diff,
                    reason=c.shape.reason if c.shape else "",
                    checks=_checks(c.failed_checks),
                )
                for c in (v.overfitting[:20] if v else ())
            ],
            failed_checks=_checks(v.failed) if v else [],
        ),
        reproduction=ReproductionItem(
            command=rep.command if rep else None,
            origin=rep.origin if rep else "none",
            confirmed=bool(rep and rep.confirmed),
            summary=rep.summary if rep else "not run",
            status=rep.status if rep else "none",
            output_tail=rep.output_tail if rep else "",
            script=rep.script if rep else None,
            expected=rep.expected if rep else None,
            sbfl_skipped=run.sbfl.skipped,
        ),
        first_hypothesis_s=run.analysis.first_hypothesis_s,
        total_s=round(total_s, 3),
        stages={n: _stage_figures(n, w, records, run.spend) for n, w in run.walls.items()},
        evidence=[
            EvidenceItem(source=e.source, text=e.text, path=e.path, line=e.line, at=e.at)
            for e in run.analysis.evidence[:50]
        ],
        notes=list(run.notes),
        repair=v.repair if v else None,
        events=[EventItem.model_validate(e.to_dict()) for e in run.events],
        calls=[r.to_dict() for r in records],
        critical_path=list(critical_path),
        degraded=failures.degraded,
        model_calls=ModelCalls(failed=failures.failed, total=failures.total),
        cost=_cost(run.spend, records),
        verdict_head=failures.line() if failures.degraded else None,
        environment=(
            EnvironmentItem.model_validate(environment.to_dict()) if environment else None
        ),
    )
    return RunReport(model)
