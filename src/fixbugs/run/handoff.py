"""What a fix is handed over with: the ``--branch`` commit's message and author, ``--pr-body``.

The texts are written from the typed report (:class:`ReportModel`), so they say
what the report says and no more: the root cause with its file and lines,
the evidence (how the bug was reproduced, or that it was not), what
validated the fix, and what nothing checked (the verdict's failed checks
and the limits of the repository's tests as the only judge). A reviewer
reads these where the fix lands, without the report beside them.

Every string of the repository, the bug report or a test's output is made
inert here: one line, controls stripped (:func:`one_line`) in the commit
message; markdown escaped, code in spans and fences its own backticks
cannot close (:mod:`fixbugs.inputs.inert`) in the pull-request text.
:func:`write_pr_body` writes the file through
:func:`~fixbugs.sandbox.untrusted.write_output`: a fresh file renamed over
the name, so a link planted there is replaced, not followed. The commit's
author and committer (:func:`identity`) are the caller's
``GIT_AUTHOR_*``/``GIT_COMMITTER_*``, else FixBugs' own.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from fixbugs.diffs import changed_line_counts, touched_files
from fixbugs.inputs.inert import md_code, md_fence, md_text, one_line
from fixbugs.repair.summary import PassedCandidate
from fixbugs.repair.verdict import FailedCheck, VerdictLevel
from fixbugs.run.report_schema import ReportModel, ReproductionItem
from fixbugs.sandbox.untrusted import write_output

__all__ = ["DEFAULT_AUTHOR", "Identity", "commit_message", "identity", "pr_body", "write_pr_body"]

DEFAULT_AUTHOR = ("FixBugs", "fixbugs@localhost")
_ROLES = ("AUTHOR", "COMMITTER")

_WIDTH = 72
_SUBJECT = 72
# what "validated" rests on (fixbugs.run.report.ORACLE_LINE), as a reviewer checks it
_HELD = (
    "the changed module's tests, and its package's, that passed before the fix still pass",
    "the change has none of the shapes that hide a failure or change what else the code "
    "does (swallowing an exception, negating a condition, returning a constant, "
    "special-casing a test's literal, deleting a check)",
)
_JUDGE = (
    "The repository's own tests were the only judge: FixBugs does not judge them, so a "
    "weak or wrong suite can pass a wrong fix"
)
_UNTESTED = "Behaviour that no test exercises: read the diff"
_Fmt = Callable[[str], str]


def _tick(text: str) -> str:
    """A command or a path in the commit message: one line, in backticks."""
    return f"`{one_line(text)}`"


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the commit names, and where that came from (said in the result line)."""

    env: Mapping[str, str]  # GIT_AUTHOR_*/GIT_COMMITTER_* for commit-tree
    author: str  # "Name <email>"
    source: str


def identity(environ: Mapping[str, str]) -> Identity:
    """The commit's author and committer: the caller's ``GIT_AUTHOR_*``/``GIT_COMMITTER_*``.

    git_env passes no ``GIT_*`` of the caller's, and the user's git config is
    off, so these are the only names git sees. A role without its own name
    or email takes the other role's; with neither, FixBugs' fixed identity.
    """
    given = {
        f"GIT_{r}_{f}": environ[f"GIT_{r}_{f}"]
        for r in _ROLES
        for f in ("NAME", "EMAIL", "DATE")
        if environ.get(f"GIT_{r}_{f}")
    }
    env: dict[str, str] = {}
    for field, default in zip(("NAME", "EMAIL"), DEFAULT_AUTHOR, strict=True):
        for role, other in zip(_ROLES, reversed(_ROLES), strict=True):
            env[f"GIT_{role}_{field}"] = (
                given.get(f"GIT_{role}_{field}") or given.get(f"GIT_{other}_{field}") or default
            )
    env.update({k: v for k, v in given.items() if k.endswith("_DATE")})
    named = [k for k in given if not k.endswith("_DATE")]
    source = (
        "from " + ", ".join(named)
        if named
        else "FixBugs' default: GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL are not set"
    )
    return Identity(env, f"{env['GIT_AUTHOR_NAME']} <{env['GIT_AUTHOR_EMAIL']}>", source)


def commit_message(report: ReportModel) -> str:
    """The ``--branch`` commit's message: subject, root cause, evidence, validation."""
    out = [_subject(report), ""]
    out += _para(f"Root cause: {_root_cause(report) or 'not determined'}")
    change = _change(report)
    if change is not None:
        out += _para(f"Change: {one_line(_change_line(change))}")
    out += _para(f"Evidence: {_evidence(report.reproduction)}.")
    forced = "; committed with --force" if report.verdict == VerdictLevel.PASSES_TESTS else ""
    lines = [f"Validation: {_verdict(report)}{_summary(report)}{forced}."]
    if report.verdict == VerdictLevel.VALIDATED:
        lines.append(f"What held: {_reproduced_passes(report)}; " + "; ".join(_HELD) + ".")
    for check in report.validation.failed_checks:
        lines.append(f"Not held: {one_line(FailedCheck(check.kind, check.why).line())}.")
    lines.append(f"{_JUDGE}.")
    for line in lines:
        out += _para(line)
    out.append("Made by FixBugs (fixbugs run --branch).")
    return "\n".join(out) + "\n"


def pr_body(report: ReportModel) -> str:
    """``--pr-body``: the pull request's text, in markdown.

    Sections: summary, root cause (file:line), reproduction, what validated
    it, what it did not check.
    """
    files = touched_files(report.patch or "")
    added, removed = changed_line_counts(report.patch or "")
    changed = ", ".join(md_code(f) for f in files) or "no file"
    out = ["## Summary", ""]
    out.append(
        f"{md_text(report.title) or 'A reported bug'}: FixBugs proposes a change to {changed} "
        f"(+{added} -{removed} lines). Verdict: **{md_text(_verdict(report))}**."
    )
    change = _change(report)
    if change is not None:
        out += ["", f"The change: {md_text(_change_line(change))}."]
    out += ["", "## Root cause", ""]
    rc = report.root_cause
    if rc is None:
        out.append("Not determined.")
    else:
        fn = f" in {md_code(rc.function)}" if rc.function else ""
        out.append(
            f"{md_code(_where(rc.path, *rc.lines))}{fn} (found by {md_text(rc.origin)}): "
            + md_text(rc.explanation)
        )
    out += ["", "## Reproduction", "", _md_evidence(report.reproduction)]
    rep = report.reproduction
    if rep.script:
        out += ["", *md_fence(rep.script.rstrip("\n"), "python")]
    if report.environment is not None:
        env = report.environment
        pytest = f"pytest {md_text(env.pytest)}" if env.pytest else "no pytest"
        out += [
            "",
            f"Tests ran with Python {md_text(env.version)} ({md_text(env.source)}), {pytest}.",
        ]
    out += ["", "## What validated it", ""]
    out.append(f"- verdict **{md_text(_verdict(report))}**{_summary(report, md_text)}")
    out.append(f"- {_reproduced_passes(report, md_code)}")
    if report.verdict == VerdictLevel.VALIDATED:
        out += [f"- {md_text(h)}" for h in _HELD]
    out += ["", "## What it did not check", ""]
    out += [f"- {md_text(line, starts_line=True)}" for line in _unchecked(report)]
    return "\n".join(out) + "\n"


def held_back(report: ReportModel, *, force: bool, refused: str, verb: str) -> str | None:
    """Why ``--apply``/``--branch`` leaves the repository alone (one line), or None to go on.

    Only a ``validated`` fix is handed over; one that only ``passes_tests``
    with ``force``. ``refused`` opens the line ("not applied", "no branch
    made"), ``verb`` says what ``--force`` would do ("applies", "commits").
    """
    if report.verdict == VerdictLevel.NO_FIX or not report.patch:
        return f"{refused}: the run has no fix. The repository was not changed"
    if report.verdict != VerdictLevel.VALIDATED and not force:
        return (
            f"{refused}: the fix {report.verdict.label} but is not validated (see the failed "
            f"checks above); --force {verb} it anyway. The repository was not changed"
        )
    return None


def write_pr_body(report: ReportModel, path: Path) -> str:
    """Write :func:`pr_body` at ``path`` (fresh, renamed over the name); one line to print."""
    path = path.expanduser()
    if not report.patch:
        return f"no pull-request text written to {path}: the run has no fix"
    write_output(path, pr_body(report).encode(), what="--pr-body")
    return f"pull-request text written to {path}"


def _change(report: ReportModel) -> PassedCandidate | None:
    """The repair's record of the fix the report leads with (where, which edit), if kept."""
    if report.repair is None or not report.patch:
        return None
    passed = (*report.repair.validated, *report.repair.overfitting)
    return next((c for c in passed if c.diff == report.patch), None)


def _change_line(c: PassedCandidate) -> str:
    return f"{_where(c.path, *c.lines)}, {c.template}: {c.why}"


def _md_evidence(rep: ReproductionItem) -> str:
    line = _evidence(rep, md_text, md_code)
    return line[0].upper() + line[1:]


def _subject(report: ReportModel) -> str:
    title = one_line(report.title)
    if not title:
        rc = report.root_cause
        title = f"the bug at {_where(rc.path, *rc.lines)}" if rc else "the reported bug"
    subject = title if title.lower().startswith("fix") else f"Fix {title}"
    if len(subject) > _SUBJECT:
        subject = subject[: _SUBJECT - 1].rstrip() + "…"
    return subject


def _para(text: str) -> list[str]:
    """A paragraph of the commit message, wrapped, and the blank line after it."""
    return [*textwrap.wrap(text, _WIDTH, break_long_words=False, break_on_hyphens=False), ""]


def _where(path: str, first: int, last: int) -> str:
    return f"{path}:{first}" if first == last else f"{path}:{first}-{last}"


def _root_cause(report: ReportModel) -> str | None:
    rc = report.root_cause
    if rc is None:
        return None
    fn = f" in {rc.function}" if rc.function else ""
    return one_line(f"{_where(rc.path, *rc.lines)}{fn} (found by {rc.origin}): {rc.explanation}")


def _evidence(rep: ReproductionItem, text: _Fmt = one_line, code: _Fmt = _tick) -> str:
    """How the bug was reproduced, in one line, or that it was not (``text`` and ``code``
    make the report's strings inert for where the line goes)."""
    what = _script_name(rep) if rep.script else (code(rep.command) if rep.command else None)
    what = what or "the tests"
    summary = f": {text(rep.summary)}" if rep.summary else ""
    origin = text(rep.origin)
    if rep.confirmed:
        return f"reproduced ({origin}): {what} failed before the fix{summary}"
    if rep.status == "passes":
        return f"not reproduced: {what} passed before the fix{summary}"
    if rep.status == "could_not_run":
        return f"not reproduced: {what} could not run{summary}"
    return "not reproduced: no test command was given or found"


def _script_name(rep: ReproductionItem) -> str:
    """Whose script reproduced the bug: the user's (the report's) or the model's."""
    return "the model's script" if rep.origin == "written" else "the report's code"


def _verdict(report: ReportModel) -> str:
    if report.verdict == VerdictLevel.PASSES_TESTS:
        return "passes the tests, not validated"
    return report.verdict.label


def _summary(report: ReportModel, text: _Fmt = one_line) -> str:
    """The validation's own summary after the verdict (which candidate, how many ran)."""
    summary = report.validation.summary
    return f" ({text(summary)})" if summary and summary != "not run" else ""


def _reproduced_passes(report: ReportModel, code: _Fmt = _tick) -> str:
    rep = report.reproduction
    if not rep.confirmed:
        return "no reproducing test ran before the fix, so none shows it gone"
    if rep.script:
        expected = " and prints what the report expects" if rep.expected else ""
        return f"{_script_name(rep)} no longer fails{expected}"
    return f"the failing tests ({code(rep.command or 'the reproduction')}) now pass"


def _unchecked(report: ReportModel) -> list[str]:
    """What nothing checked: the failed checks first, then the limits of this run's evidence."""
    out = [f"it {FailedCheck(c.kind, c.why).line()}" for c in report.validation.failed_checks]
    rep = report.reproduction
    if not rep.confirmed:
        out.append(f"The bug itself: {_evidence(rep)}")
    elif rep.script and not rep.expected:
        out.append(
            "The right result: the report names no expected output, so the check saw "
            f"only the failure of {_script_name(rep)} gone"
        )
    if rep.sbfl_skipped:
        out.append(
            f"SBFL did not run ({rep.sbfl_skipped}): the root cause stands on static evidence"
        )
    elif report.root_cause is not None and report.root_cause.origin == "static":
        out.append("The root cause was chosen on static evidence alone")
    if report.degraded and report.verdict_head:
        out.append(f"{report.verdict_head}: the result stands on static evidence")
    out += [_JUDGE, _UNTESTED]
    return out
