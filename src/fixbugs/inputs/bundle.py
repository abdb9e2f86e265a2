"""Every input of one debugging run, validated together.

:func:`load_inputs` is the one place a run's inputs are checked: a report
and a repository are required and any problem with them is an
:class:`~fixbugs.errors.InputError`; a log, trace or screenshot that is not
what it claims to be is an error too (the user named it, so they should
hear it is wrong), while things that merely weaken the evidence (an empty
log, OCR not installed) become ``notes`` and the run goes on. A trace file
past the JSON bounds (:class:`~fixbugs.inputs.boundedjson.JsonLimit`:
nested too deep, a number too long or not finite) is hostile rather than
mistaken: it is dropped with a note, and the run goes on without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbugs.inputs.boundedjson import JsonLimit
from fixbugs.inputs.logs import check_log
from fixbugs.inputs.repo import Repository, open_repo
from fixbugs.inputs.report import BugReport, load_report
from fixbugs.inputs.screenshots import Screenshot, load_screenshot
from fixbugs.inputs.traces import Trace, load_traces

__all__ = ["BugInputs", "TextInputs", "load_inputs", "read_texts", "with_repo"]


@dataclass(frozen=True)
class BugInputs:
    report: BugReport
    repo: Repository
    logs: tuple[Path, ...]
    traces: tuple[Trace, ...]
    test_command: str | None
    screenshots: tuple[Screenshot, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class TextInputs:
    """The untrusted texts of a run, read and checked: what :func:`read_texts` returns.

    Plain data (a report, kept log paths, traces, notes), so a worker process
    can read them and hand them back as JSON (:mod:`fixbugs.inputs.isolated`).
    """

    report: BugReport
    logs: tuple[Path, ...]
    traces: tuple[Trace, ...]
    notes: tuple[str, ...]  # the logs' and traces' (the report keeps its own)


def read_texts(report: Path, logs: Sequence[Path] = (), traces: Sequence[Path] = ()) -> TextInputs:
    """Read and check the report, logs and traces: the parsing of untrusted text."""
    notes: list[str] = []
    bug = load_report(report)
    kept_logs: list[Path] = []
    for log in logs:
        path, note = check_log(log)
        if note:
            notes.append(note)
        else:
            kept_logs.append(path)
    all_traces: list[Trace] = []
    for trace_file in traces:
        try:
            loaded = load_traces(trace_file)
        except JsonLimit as e:
            notes.append(f"{e}; the trace is left out")
            continue
        if not loaded:
            notes.append(f"trace file {trace_file} holds no spans; skipped")
        all_traces.extend(loaded)
    return TextInputs(bug, tuple(kept_logs), tuple(all_traces), tuple(notes))


def with_repo(
    texts: TextInputs,
    repo: Path,
    test: str | None = None,
    screenshots: Sequence[Path] = (),
    artifacts_dir: Path | None = None,
) -> BugInputs:
    """The run's inputs: ``texts`` and the repository, test command and screenshots."""
    repository = open_repo(repo)
    shots = [load_screenshot(s, artifacts_dir, index=i) for i, s in enumerate(screenshots)]
    notes = [*texts.report.notes, *repository.notes(), *texts.notes]
    notes.extend(s.note for s in shots if s.note)
    command = test.strip() if test else None
    return BugInputs(
        report=texts.report,
        repo=repository,
        logs=texts.logs,
        traces=texts.traces,
        test_command=command or None,
        screenshots=tuple(shots),
        notes=tuple(notes),
    )


def load_inputs(
    report: Path,
    repo: Path,
    logs: Sequence[Path] = (),
    traces: Sequence[Path] = (),
    test: str | None = None,
    screenshots: Sequence[Path] = (),
    artifacts_dir: Path | None = None,
) -> BugInputs:
    """Load and validate everything; logs are checked here but streamed later."""
    return with_repo(read_texts(report, logs, traces), repo, test, screenshots, artifacts_dir)
