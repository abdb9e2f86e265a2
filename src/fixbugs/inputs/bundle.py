"""Every input of one debugging run, validated together.

:func:`load_inputs` is the one place a run's inputs are checked: a report
and a repository are required and any problem with them is an
:class:`~fixbugs.errors.InputError`. A log, trace or screenshot the user
named that does not exist is an error too (a typo: they should hear it
before any work). One that exists but cannot be used (a binary or broken
log, a zip bomb, an image that is not one or declares too many pixels) is
left out with one line in ``notes`` and the run goes on without it, as do
things that merely weaken the evidence (an empty log, no OCR here). A trace
file that is not valid JSON is an error; one past the JSON bounds
(:class:`~fixbugs.inputs.boundedjson.JsonLimit`: nested too deep, a number
too long or not finite) is hostile rather than mistaken: dropped with a
note. A folder of logs is read as its files
(:func:`~fixbugs.inputs.logsources.folder_logs`).

Images (``--screenshot`` files, and in :func:`load_inputs` the images the
report links below its own folder) are read by OCR inside the sandbox; their
text joins the report as comments (:func:`~fixbugs.inputs.screenshots.with_image_texts`),
so a traceback in a screenshot is parsed as the report's traceback is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbugs.errors import InputError
from fixbugs.inputs.boundedjson import JsonLimit
from fixbugs.inputs.bug_report import BugReport, load_report
from fixbugs.inputs.logs import EMPTY, check_log
from fixbugs.inputs.logsources import folder_logs
from fixbugs.inputs.repo import Repository, open_repo
from fixbugs.inputs.reportimages import linked_images
from fixbugs.inputs.screenshots import Screenshot, load_screenshots, with_image_texts
from fixbugs.inputs.textfile import require_file
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
        named = Path(log).expanduser()
        if named.is_dir():
            files, left_out = folder_logs(named)
            notes.extend(left_out)
            if not files:
                notes.append(f"log folder {named} holds no file; skipped")
        else:
            files = [require_file(named, "log")]  # a missing log is the user's typo: an error
        for file in files:
            try:
                path, note = check_log(file)
            except InputError as e:  # there but unusable: one line, and the run goes on
                notes.append(f"{e}; left out")
                continue
            if note:
                notes.append(note)
            if note is None or not note.endswith(EMPTY):
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
    *,
    report_images: bool = False,
) -> BugInputs:
    """The run's inputs: ``texts`` and the repository, test command and screenshots.

    ``report_images``: the images the report links are read too. Off where
    ``texts`` are read again for each stage (the staged pipeline), so OCR runs
    once per run, in :func:`load_inputs`.
    """
    repository = open_repo(repo)
    linked = linked_images(texts.report.text, texts.report.source) if report_images else None
    shots, image_notes = load_screenshots(
        screenshots,
        linked.paths if linked else (),
        artifacts_dir,
        within=linked.folder if linked else None,
    )
    notes = [*texts.report.notes, *repository.notes(), *texts.notes]
    notes.extend(linked.notes if linked else ())
    notes.extend(image_notes)
    command = test.strip() if test else None
    return BugInputs(
        report=with_image_texts(texts.report, shots),
        repo=repository,
        logs=texts.logs,
        traces=texts.traces,
        test_command=command or None,
        screenshots=shots,
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
    texts = read_texts(report, logs, traces)
    return with_repo(texts, repo, test, screenshots, artifacts_dir, report_images=True)
