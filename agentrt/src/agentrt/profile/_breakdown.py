"""Where a recorded run's time went, per stage.

Reads the metrics JSON a run wrote (``{"calls": [CallRecord...], ...}``, as
:meth:`MetricsRecorder.write_json` writes it) and splits each stage's
call time into queueing, prefill, decode, retries and tool waits. Calls
that measured their TTFT are split as measured; for the others the prefill
part comes from the latency model fitted to the run's own measured calls.
When the run measured no TTFT at all, nothing can tell prefill from decode:
that time is kept whole as ``unsplit_s`` and the report says it does not
know, rather than splitting it by a default latency model.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentrt._errors import UserError
from agentrt.metrics._record import CallRecord
from agentrt.tokens._latency import LatencyModel, calibrate

__all__ = ["RunBreakdown", "StageBreakdown", "breakdown", "load_run"]


@dataclass(frozen=True, slots=True)
class StageBreakdown:
    """One stage's time, in seconds summed over its calls, and its shape.

    ``span_s`` is the stage's stretch of the run's timeline (first start to
    last end); ``concurrency`` is summed call time over that span (1 for
    calls one after another). ``model_s`` is queue + prefill + decode +
    retries of the model calls, plus ``unsplit_s``: prefill and decode of
    calls whose split nobody measured. ``chained`` says each call started only
    when the previous one ended (within 10 ms): the shape dependent steps have.
    """

    stage: str
    model_calls: int
    tool_calls: int
    span_s: float
    concurrency: float
    queue_s: float
    prefill_s: float
    decode_s: float
    retry_s: float
    tool_s: float
    unsplit_s: float
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    streamed_calls: int
    ttft_measured_calls: int
    chained: bool

    @property
    def model_s(self) -> float:
        return self.queue_s + self.prefill_s + self.decode_s + self.unsplit_s + self.retry_s

    @property
    def service_s(self) -> float:
        """Prefill and decode together, split or not."""
        return self.prefill_s + self.decode_s + self.unsplit_s

    @property
    def model_s_per_call(self) -> float:
        return self.model_s / self.model_calls if self.model_calls else 0.0

    def parts(self) -> dict[str, float]:
        return {
            "queue_s": self.queue_s,
            "prefill_s": self.prefill_s,
            "decode_s": self.decode_s,
            "unsplit_s": self.unsplit_s,
            "retry_s": self.retry_s,
            "tool_s": self.tool_s,
        }


@dataclass(frozen=True, slots=True)
class RunBreakdown:
    stages: tuple[StageBreakdown, ...]
    wall_s: float
    latency: LatencyModel
    latency_fitted: bool  # False: no TTFT measured, the latency model is only defaults
    decode_measured: bool  # a streamed call measured a decode rate

    @property
    def dominant(self) -> StageBreakdown | None:
        """The stage with the longest stretch of the timeline."""
        return max(self.stages, key=lambda s: s.span_s, default=None)


def load_run(path: str | Path) -> list[CallRecord]:
    """The call records of a run's metrics JSON; one-line UserError if unreadable."""
    p = Path(path)
    try:
        obj: Any = json.loads(p.read_text())
    except OSError as exc:
        raise UserError(f"cannot read run file {str(p)!r}: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"run file {str(p)!r} is not JSON: {str(exc).splitlines()[0]}") from None
    calls = obj.get("calls") if isinstance(obj, dict) else None
    if not isinstance(calls, list):
        raise UserError(
            f"run file {str(p)!r} has no 'calls' list: expected metrics JSON "
            "as `agentrt demo --json` or MetricsRecorder.write_json writes it"
        )
    try:
        return [CallRecord.from_dict(c) for c in calls]
    except (TypeError, ValueError) as exc:
        raise UserError(f"run file {str(p)!r} holds a malformed call record: {exc}") from None


def _split(r: CallRecord, lm: LatencyModel | None) -> tuple[float, float, float, float, float]:
    """(queue, prefill, decode, retry, unsplit) seconds of one model call.

    Without a measured TTFT the prefill comes from ``lm``; with no ``lm``
    (nothing in the run measured one) the attempt's time stays unsplit.

    Retries: the call's time past the queue, beyond one attempt's share
    (attempts of a call are assumed to cost alike).
    """
    queue = min(r.queue_wait_s, r.wall_s)
    service = r.wall_s - queue
    retry = service * (r.attempts - 1) / r.attempts if r.attempts > 1 else 0.0
    one = service - retry
    if r.ttft_s is not None:
        prefill = min(r.ttft_s, one)
    elif lm is not None:
        prefill = min(lm.ttft(max(0, r.input_tokens - r.cached_tokens)), one)
    else:
        return queue, 0.0, 0.0, retry, one
    return queue, prefill, one - prefill, retry, 0.0


def _chained(records: Sequence[CallRecord]) -> bool:
    rs = sorted(records, key=lambda r: r.started_at)
    if len(rs) < 2:
        return False
    return all(b.started_at >= a.ended_at - 0.01 for a, b in itertools.pairwise(rs))


def _stage(name: str, records: Sequence[CallRecord], lm: LatencyModel | None) -> StageBreakdown:
    model = [r for r in records if r.kind == "model"]
    tools = [r for r in records if r.kind == "tool"]
    q = p = d = rt = u = 0.0
    for r in model:
        a, b, c, e, f = _split(r, lm)
        q, p, d, rt, u = q + a, p + b, d + c, rt + e, u + f
    span = max(r.ended_at for r in records) - min(r.started_at for r in records)
    busy = sum(r.wall_s for r in records)
    return StageBreakdown(
        stage=name,
        model_calls=len(model),
        tool_calls=len(tools),
        span_s=span,
        concurrency=busy / span if span > 0 else 1.0,
        queue_s=q,
        prefill_s=p,
        decode_s=d,
        retry_s=rt,
        tool_s=sum(r.wall_s for r in tools),
        unsplit_s=u,
        input_tokens=sum(r.input_tokens for r in model),
        cached_tokens=sum(r.cached_tokens for r in model),
        output_tokens=sum(r.output_tokens for r in model),
        streamed_calls=sum(1 for r in model if r.streamed),
        ttft_measured_calls=sum(1 for r in model if r.ttft_s is not None),
        chained=_chained(model),
    )


def breakdown(records: Sequence[CallRecord], latency: LatencyModel | None = None) -> RunBreakdown:
    """Per-stage breakdown of a run; ``latency`` overrides the model fitted to it."""
    fitted = any(r.kind == "model" and r.ttft_s is not None for r in records)
    decode = any(r.kind == "model" and r.decode_tps is not None for r in records)
    lm = latency or calibrate([r for r in records if r.kind == "model"])
    known = fitted or latency is not None
    order: dict[str, None] = {}
    for r in records:
        order.setdefault(r.stage, None)
    split_by = lm if known else None
    stages = tuple(_stage(s, [r for r in records if r.stage == s], split_by) for s in order)
    wall = max(r.ended_at for r in records) - min(r.started_at for r in records) if records else 0.0
    return RunBreakdown(stages, wall, lm, known, decode or latency is not None)
