"""What the user gives FixBugs: report, repository, logs, traces, test, screenshots.

Every loader validates its input and fails with a one-line
:class:`~fixbugs.errors.InputError` naming the file and the fix, or keeps
going with a note; none of them crashes on a malformed file.
"""

from fixbugs.inputs.bug_report import BugReport, ReportFormat, load_report
from fixbugs.inputs.bundle import BugInputs, load_inputs
from fixbugs.inputs.logs import LogFormat, LogRecord, check_log, iter_log_records, parse_line
from fixbugs.inputs.repo import Repository, open_repo
from fixbugs.inputs.screenshots import ImageKind, Screenshot, image_kind, load_screenshot
from fixbugs.inputs.traces import Span, SpanEvent, Trace, load_traces, parse_otlp

__all__ = [
    "BugInputs",
    "BugReport",
    "ImageKind",
    "LogFormat",
    "LogRecord",
    "ReportFormat",
    "Repository",
    "Screenshot",
    "Span",
    "SpanEvent",
    "Trace",
    "check_log",
    "image_kind",
    "iter_log_records",
    "load_inputs",
    "load_report",
    "load_screenshot",
    "load_traces",
    "open_repo",
    "parse_line",
    "parse_otlp",
]
