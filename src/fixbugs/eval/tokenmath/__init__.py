"""``fixbugs bench tokenmath``: the agent's model calls at a 7B model's speed, four ways.

The seeds' token math says a model's wall is about TTFT + output tokens ×
time per token, so one call holding all the evidence waits for every output
token in one stream, while the same work as concurrent calls waits only for
the longest chain of them. This bench checks that claim on FixBugs itself,
by running, not by formula:

1. **Record.** The whole agent runs on each case of a case folder (real
   sandbox, real tests) against the oracle endpoint (:mod:`fixbugs.eval.oracle`,
   answers from the case's gold, fast), and every model call it makes is
   recorded as sent: its request, its answer and when it started and ended
   on the run's real clock.
2. **Replay, four ways**, against the provider simulator with a latency
   profile (``7b``: TTFT growing with input tokens, ~40 output tokens/s per
   stream, 8 requests served at once) on a :class:`~agentrt.FakeClock`, so
   the figures are the profile's, not this machine's load:

   * *concurrent*: each call starts when the calls it waited for in the
     recorded run have ended (a call "waited for" every call that had ended
     before it started: the agent's dependency graph as it scheduled it,
     read conservatively), the others at once;
   * *sequential*: the same calls one after another, in the order they started;
   * *one call*: one request whose input is all the evidence those calls
     read (each distinct prompt once: the judge's quorum asks one prompt
     twice) and whose output is their answers' total (each distinct one once);
   * *whole bug*: that one call with the report and every Python file of the
     repository added, the same output: the call of an agent that narrows
     nothing, which FixBugs' own stages (index, ranking, static evidence)
     replace. With the same evidence, one call and the concurrent calls
     differ only by the calls that run at once; with the whole bug, by what
     the model is spared reading.

   The four walls are the model calls alone. Beside them, ``agent_s`` is
   the whole run at the profile's speed: the calls replayed concurrently as
   above, the agent's own work (index, sandbox, tests) kept at the time it
   took for real, a call shifted by as much as the calls it waited for ended
   later than recorded (conservative: waiting that overlapped the agent's
   own work is counted as if it did not).

The token math's prediction (per call TTFT + output/decode rate; its
critical path, its sum, and one call on the summed tokens) is printed beside
the measured walls, never in place of them.
"""

from fixbugs.eval.tokenmath._command import TokenmathResult, bench_tokenmath, tokenmath_command
from fixbugs.eval.tokenmath._record import (
    CaseRecording,
    RecordedCall,
    RecordingModel,
    record_case,
    whole_bug_text,
)
from fixbugs.eval.tokenmath._replay import (
    BugFigures,
    Replayed,
    StageFigures,
    WayFigures,
    one_call_request,
    predict,
    replay,
    whole_bug_request,
)

__all__ = [
    "BugFigures",
    "CaseRecording",
    "RecordedCall",
    "RecordingModel",
    "Replayed",
    "StageFigures",
    "TokenmathResult",
    "WayFigures",
    "bench_tokenmath",
    "one_call_request",
    "predict",
    "record_case",
    "replay",
    "tokenmath_command",
    "whole_bug_request",
    "whole_bug_text",
]
