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

__all__ = ["BugInputs", "load_inputs"]


@dataclass(frozen=True)
class BugInputs:
    report: BugReport
    repo: Repository
    logs: tuple[Path, ...]
    traces: tuple[Trace, ...]
    test_command: str | None
    screenshots: tuple[Screenshot, ...]
    notes: tuple[str, ...]


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
    notes: list[str] = []
    bug = load_report(report)
    notes.extend(bug.notes)
    repository = open_repo(repo)
    notes.extend(repository.notes())
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
    shots = [load_screenshot(s, artifacts_dir, index=i) for i, s in enumerate(screenshots)]
    notes.extend(s.note for s in shots if s.note)
    command = test.strip() if test else None
    return BugInputs(
        report=bug,
        repo=repository,
        logs=tuple(kept_logs),
        traces=tuple(all_traces),
        test_command=command or None,
        screenshots=tuple(shots),
        notes=tuple(notes),
    )
