"""The analysis stage: compress the artifacts into evidence, fast.

The report's traceback and the static localization signals need no model,
so the first hypothesis (a file and why) is out within a second or so. Logs
are read as a stream: signal lines (warnings, errors, failures) are kept
with provenance, the chunks richest in them are mapped by the small model
into structured evidence, and a reducer orders it by time, groups it by
trace and splits it by service. Traces contribute their failing or
code-annotated spans.

The report, logs and traces are a tenant's text, and the service runs many
jobs on one event loop: every parse of them here (the traceback, the static
signals, the log's signal lines and chunks) runs in a worker thread
(:func:`asyncio.to_thread`), so the loop keeps answering while a long
report is read. The thread gives up the GIL every few milliseconds, and no
single regular-expression call in these parsers reads more than a line or a
block (``tests/security/test_loop_latency.py``).
"""

from __future__ import annotations

import asyncio
import heapq
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO, cast

from agentrt import BudgetExhausted
from agentrt.chunking import LogChunk, chunk_log
from agentrt.evidence import Evidence as RtEvidence
from agentrt.evidence import Provenance, digest
from agentrt.graph import gather_map, with_deadline
from agentrt.llm import ChatRequest
from fixbugs.inputs import BugInputs, LogRecord, iter_log_records
from fixbugs.inputs.logsources import STREAM_ERRORS, open_streams
from fixbugs.localize.evidence import FileEvidence
from fixbugs.localize.locate import static_evidence
from fixbugs.localize.rank import RankedFile, rank_files
from fixbugs.localize.traceback import ParsedFailure, parse_failure
from fixbugs.pyenv.testrun import parse_test_command
from fixbugs.run.context import RunContext
from fixbugs.run.progress import HypothesisData, LogFindingsData
from fixbugs.run.record import Analysis, EvidenceLine
from fixbugs.stages.ranked import ranked_event

__all__ = [
    "log_chunks",
    "log_signal_records",
    "run_analysis",
    "trace_file_evidence",
]

_SIGNAL = re.compile(r"\b(error|exception|fail(ed|ure)?|traceback|warn(ing)?|fatal|panic)\b", re.I)
_BAD_LEVELS = {"WARN", "WARNING", "ERROR", "FATAL", "CRITICAL"}
MAX_SIGNAL_LINES = 200
LOG_CHUNK_TOKENS = 400
LOG_SYSTEM = "You read log lines and report only what they show, briefly."


def _is_signal(r: LogRecord) -> bool:
    return (r.level or "").upper() in _BAD_LEVELS or bool(_SIGNAL.search(r.message or ""))


def log_signal_records(path: Path) -> Iterator[LogRecord]:
    """The warning/error lines of a log, streamed."""
    for r in iter_log_records(path):
        if _is_signal(r):
            yield r


def trace_file_evidence(
    inputs: BugInputs, files: Mapping[str, str]
) -> tuple[list[EvidenceLine], list[FileEvidence]]:
    """Spans that failed or name their code: the bug's evidence, and the files they point at."""
    evidence: list[EvidenceLine] = []
    out: list[FileEvidence] = []
    for trace in inputs.traces:
        for span in trace.spans:
            attrs = span.attributes
            path = attrs.get("code.filepath") or attrs.get("code.file.path")
            failed = span.status_code.upper() in {"ERROR", "STATUS_CODE_ERROR", "2"}
            interesting = {k: v for k, v in attrs.items() if not k.startswith(("http.", "code."))}
            text = (
                f"span {span.name} ({span.service or '?'}) "
                + ("failed: " + span.status_message + " " if failed else "")
                + ", ".join(f"{k}={v}" for k, v in list(interesting.items())[:8])
            )
            evidence.append(EvidenceLine("trace", text, path, None, span.span_id))
            if isinstance(path, str) and path in files:
                out.append(
                    FileEvidence(
                        path,
                        "trace",
                        1.0 if failed else 0.6,
                        f"trace span {span.name} runs this file",
                    )
                )
    return evidence, out


async def _map_log_chunks(inputs: BugInputs, ctx: RunContext, path: Path) -> list[RtEvidence]:
    """The small model reads the chunks with the most signal lines."""

    def scored() -> Iterator[tuple[int, int, LogChunk]]:
        for index, chunk in enumerate(log_chunks(path, LOG_CHUNK_TOKENS)):
            hits = sum(1 for line in chunk.text.splitlines() if _SIGNAL.search(line))
            if hits:
                yield hits, -index, chunk

    def best() -> list[LogChunk]:
        # streamed: only the k best chunks are ever held, whatever the log's size
        kept = heapq.nlargest(ctx.options.max_log_chunks, scored(), key=lambda t: (t[0], t[1]))
        return [c for _, _, c in sorted(kept, key=lambda t: -t[1])]

    model = ctx.step_model("log_map")
    if model is None:  # nothing would read the chunks
        return []
    chunks = await asyncio.to_thread(best)
    if not chunks:
        return []
    summary = inputs.report.title

    async def one(c: LogChunk) -> list[RtEvidence]:
        # Plain text, not JSON: the finding is one sentence and the chunk's own
        # provenance is exact; a small model keeps plain text well-formed.
        req = ChatRequest.of(
            f"Bug: {summary}\nLog lines {c.first_line}-{c.last_line}:\n{c.text}\n"
            "In one sentence: what in these lines relates to the bug?",
            system=LOG_SYSTEM,
            max_tokens=48,
        )
        res = await with_deadline(
            ctx.clock, ctx.step_deadline_s("log_map"), model.complete(req), what="log map"
        )
        text = " ".join(res.text.split())
        prov = Provenance(source=c.source, line=c.first_line, byte_offset=c.byte_offset)
        return [RtEvidence("candidate", text, prov, confidence=0.3)] if text else []

    outcomes = await gather_map(one, chunks, limit=4)
    found: list[RtEvidence] = []
    for o in outcomes:
        if o.error is None and o.value:
            found.extend(o.value)
        elif o.error is not None and not isinstance(o.error, BudgetExhausted):
            # (a call the spend budget refused is said once, by the budget's note)
            ctx.journal.note("analysis", f"log chunk map failed: {o.error}")
    return found


def log_chunks(path: Path, budget: int) -> Iterator[LogChunk]:
    """The chunks of a log as the records read it: through gzip, a zip's members in turn
    (each chunk's ``source`` names its file or member); a broken stream ends there."""
    for source, stream in open_streams(path):
        try:
            yield from chunk_log(cast(BinaryIO, stream), budget, source=source)
        except STREAM_ERRORS:
            continue


def _signal_evidence(path: Path) -> list[RtEvidence]:
    out: list[RtEvidence] = []
    for r in log_signal_records(path):
        ts = r.timestamp.timestamp() if r.timestamp else None
        out.append(
            RtEvidence(
                "signal",
                r.message or r.raw,
                Provenance(
                    r.source or path.name,
                    r.line_no,
                    r.byte_offset,
                    r.trace_id,
                    r.span_id,
                    r.service,
                    ts,
                ),
            )
        )
        if len(out) >= MAX_SIGNAL_LINES:
            break
    return out


def _static_signals(
    inputs: BugInputs, files: Mapping[str, str], text: str
) -> tuple[ParsedFailure, list[FileEvidence], list[EvidenceLine], list[RankedFile]]:
    """The report's traceback, the static evidence and its ranking: CPU work on the
    report's text, run in a worker thread (see the module's docstring)."""
    report = inputs.report
    failure = parse_failure(text, files.keys())
    test_ids = parse_test_command(inputs.test_command or "").test_ids
    file_ev = static_evidence(files, report.title + "\n" + text, failure, test_ids)
    evidence, trace_ev = trace_file_evidence(inputs, files)
    file_ev += trace_ev
    return failure, file_ev, evidence, rank_files(file_ev)


async def run_analysis(inputs: BugInputs, ctx: RunContext) -> Analysis:
    """The analysis stage: static signals (report, traceback, logs, traces), the first ranking.

    The first hypothesis (the top file and why) is emitted as soon as the
    static ranking exists, before the logs are mapped.
    """
    report = inputs.report
    text = report.body + "\n" + "\n".join(report.comments)
    # the index is built (or read back) off the event loop: the sandbox's copy of the
    # tree is made meanwhile
    files = await asyncio.to_thread(ctx.files)
    for note in files.notes:
        ctx.journal.note("analysis", note)
    failure, file_ev, evidence, ranked = await asyncio.to_thread(
        _static_signals, inputs, files, text
    )
    first_hypothesis_s: float | None = None
    if ranked:
        top = ranked[0]
        hypothesis = ctx.journal.emit(
            "hypothesis",
            "analysis",
            f"{top.path} — " + "; ".join(top.reasons[:2]),
            HypothesisData(top.path, tuple(top.reasons)),
        )
        # one clock reading: the report's figure is the event's own time
        first_hypothesis_s = hypothesis.at_s
    evidence += [
        EvidenceLine("traceback", frame.text, frame.path, frame.line)
        for frame in failure.project_frames()
    ]
    log_ev: list[RtEvidence] = []
    for path in inputs.logs:
        log_ev += await asyncio.to_thread(_signal_evidence, path)
        log_ev += await _map_log_chunks(inputs, ctx, path)
    log_digest = ""
    if log_ev:
        d = digest(log_ev)
        log_digest = d.render()
        ctx.journal.emit(
            "evidence",
            "analysis",
            f"{len(d.items)} log findings ({d.dropped} duplicates dropped), ordered by time, "
            f"grouped into {len(d.by_trace)} trace(s), {len(d.by_service)} service(s)",
            LogFindingsData(tuple(sorted(d.by_service))),
        )
    ranked_event(ctx, "analysis", "ranked files (static signals)", ranked)
    return Analysis(
        evidence=tuple(evidence),
        log_digest=log_digest,
        failure=failure,
        ranked=tuple(ranked),
        first_hypothesis_s=first_hypothesis_s,
        static=tuple(file_ev),
    )
