"""The oracle model: an OpenAI-compatible endpoint that answers FixBugs' prompts from the gold.

The proof of plumbing: FixBugs must turn right answers into validated
fixes, and survive wrong ones. The endpoint is agentrt's simulator
(:mod:`agentrt.sim`) with a responder that knows one case's gold fix:

* relevance (a chunk of files): the gold files relevant, the others not;
* the root-cause judgment: the listed region that holds a gold hunk (its id,
  then an explanation quoting a line of it); with none listed, the gold
  file and function named, with a quoted line of the gold region;
* the rewrite: the gold fixed code, in one of the three edit forms
  (:mod:`fixbugs.repair.edits`), the form rotating with the case and seed.

Each prompt kind is recognised by the system prompt FixBugs itself sets for
it (the constants of the stages), never by the user text; only the facts an
answer needs (the chunk's files, the listed regions) are read from the
prompt, in the format its builder writes. The noisy mode
(:class:`~agentrt.sim.NoisyResponder`) makes a share of the answers wrong (a
wrong file: another file relevant, a region elsewhere, the edit aimed at a
file it does not fit) and a share malformed (cut short: JSON that does not
parse), and the profile puts a long wait before the first token.

Only the evaluation process holds the gold: the agent (or a child
``fixbugs run``) gets the endpoint's URL and nothing else.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from starlette.applications import Starlette

from agentrt.sim import (
    AnswerNoise,
    DefaultResponder,
    NoisyResponder,
    Responder,
    ResponderInput,
    SimProfile,
    create_app,
    serving_in_thread,
)
from fixbugs.eval.case import AgentOutput, AgentRunner, Case
from fixbugs.eval.gold_edits import FORMATS, GoldFix, gold_edits, load_gold_fix
from fixbugs.index import is_test_path
from fixbugs.inputs.walk import walk_text_files
from fixbugs.localize.relevance import RELEVANCE_SYSTEM
from fixbugs.repair.edits import (
    EditFormat,
    EditRejected,
    FunctionRewrite,
    ModelEdit,
    SearchReplace,
    UnifiedDiff,
    render_edits,
)
from fixbugs.stages.fix import FIX_SYSTEM
from fixbugs.stages.rootcause import JUDGE_SYSTEM

__all__ = [
    "ORACLE_MODEL",
    "OracleAnswers",
    "OracleNoise",
    "oracle_agent",
    "oracle_app",
    "oracle_profile",
    "oracle_responder",
    "prompt_kind",
]

ORACLE_MODEL = "oracle"
_CHUNK_FILES = re.compile(r"For each of these files \((.*)\) answer: is the bug likely in it\?")
_REGION = re.compile(
    r"^R(\d+): (.+?), (?:function (\S+)|module-level code), lines (\d+)-(\d+) — evidence",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class OracleNoise:
    """The noisy oracle: 30% wrong file, 10% malformed, 20 s before the first token."""

    wrong: float = 0.3
    malformed: float = 0.1
    ttft_s: float = 20.0
    seed: int = 0


def prompt_kind(system: str) -> str:
    """Which FixBugs request a system prompt belongs to ("relevance", "judgment",
    "rewrite", or "other"): by the constant the stage sets, not the user text."""
    for kind, marker in (
        ("relevance", RELEVANCE_SYSTEM),
        ("judgment", JUDGE_SYSTEM),
        ("rewrite", FIX_SYSTEM),
    ):
        if marker in system:
            return kind
    return "other"


def _overlap(a: int, b: int, c: int, d: int) -> int:
    return max(0, min(b, d) - max(a, c) + 1)


@dataclass(frozen=True, slots=True)
class _Listed:
    index: int
    path: str
    function: str | None
    start: int
    end: int


class OracleAnswers:
    """Right and wrong answers to FixBugs' prompts for one case (two responders)."""

    def __init__(
        self,
        fix: GoldFix,
        case_id: str,
        *,
        seed: int = 0,
        decoys: Sequence[str] = (),
        form: EditFormat | None = None,
    ):
        self.fix = fix
        self.case_id = case_id
        digest = hashlib.blake2b(f"{case_id}:{seed}".encode(), digest_size=4).digest()
        # the noise's draws: per case and seed, so that cases do not share one pattern
        # (the same seed everywhere made the rewrite the wrong answer in every case)
        self.draw_seed = int.from_bytes(digest, "big")
        start = FORMATS.index(form) if form else self.draw_seed % len(FORMATS)
        # the form rotates with the case and seed; one that cannot say the fix gives way
        self.form: EditFormat | None = None
        self.edits: tuple[ModelEdit, ...] = ()
        for form in (*FORMATS[start:], *FORMATS[:start]):
            try:
                self.edits = gold_edits(fix, form).edits
            except EditRejected:
                continue
            self.form = form
            break
        # files to aim a wrong answer at: the tree's other source files, never a gold one
        self.decoys = [p for p in decoys if p not in fix.new and not is_test_path(p)]
        self._fallback = DefaultResponder()

    # -- the two responders ---------------------------------------------------------
    def right(self, req: ResponderInput) -> str:
        return self._answer(req, wrong=False)

    def wrong(self, req: ResponderInput) -> str:
        return self._answer(req, wrong=True)

    def _answer(self, req: ResponderInput, *, wrong: bool) -> str:
        system = next((c for r, c in req.messages if r == "system"), "")
        user = next((c for r, c in reversed(req.messages) if r == "user"), "")
        kind = prompt_kind(system)
        if kind == "relevance":
            return self._relevance(user, wrong)
        if kind == "judgment":
            return self._judgment(user, wrong)
        if kind == "rewrite":
            return self._rewrite(wrong)
        if req.json_schema is not None:
            return self._fallback(req)
        return "Nothing in these lines points at the bug."

    # -- relevance ------------------------------------------------------------------
    def _relevance(self, user: str, wrong: bool) -> str:
        m = _CHUNK_FILES.search(user)
        paths = m.group(1).split(", ") if m else []
        gold = set(self.fix.gold.files)
        if wrong:  # another file relevant, the gold ones not
            others = [p for p in paths if p not in gold]
            gold = {others[0]} if others else set()
        files = [
            {"path": p, "relevant": p in gold, "reason": "changed by the fix" if p in gold else "-"}
            for p in paths
        ]
        return json.dumps({"files": files})

    # -- judgment -------------------------------------------------------------------
    def _judgment(self, user: str, wrong: bool) -> str:
        listed = [
            _Listed(int(m.group(1)), m.group(2), m.group(3), int(m.group(4)), int(m.group(5)))
            for m in _REGION.finditer(user)
        ]

        def hit(r: _Listed) -> int:
            return sum(
                _overlap(r.start, r.end, a, b) for p, a, b in self.fix.gold.hunks if p == r.path
            )

        if wrong:
            away = [r for r in listed if r.path not in self.fix.gold.files] or [
                r for r in listed if hit(r) == 0
            ]
            if away:
                return self._explained(away[0], None)
        best = max(listed, key=hit, default=None)
        if best is not None and hit(best) > 0:
            return self._explained(best, self._gold_line(best.path, best.start, best.end))
        # no listed region holds the fix: name its place, quoting a line of it
        path, a, line = self._anchor()
        return (
            f"{path}, line {a} (not a listed region)\n"
            f"The root cause is the line `{line}` in {path}: the real fix changes it."
        )

    def _anchor(self) -> tuple[str, int, str]:
        """A code line of the fix's place to quote: the first gold hunk's first line of code
        (a pure insertion, or a hunk of comments, has none of its own: its neighbours
        are quoted then), as a strong model would point at it."""
        for p, a, b in self.fix.gold.hunks:
            lines = self.fix.old.get(p, "").splitlines()
            for n in (*range(a, b + 1), a - 1, b + 1):
                text = lines[n - 1].strip() if 0 < n <= len(lines) else ""
                if text and not text.startswith("#"):
                    return p, n, text
        p, a, _b = self.fix.gold.hunks[0]
        return p, a, ""

    def _gold_line(self, path: str, lo: int, hi: int) -> str | None:
        """A line the fix rewrites, inside ``lo``..``hi`` of ``path`` (its buggy text)."""
        lines = self.fix.old.get(path, "").splitlines()
        for p, a, b in self.fix.gold.hunks:
            for n in range(max(a, lo), min(b, hi) + 1):
                if p == path and 0 < n <= len(lines) and lines[n - 1].strip():
                    return lines[n - 1].strip()
        return None

    def _explained(self, r: _Listed, line: str | None) -> str:
        lines = self.fix.old.get(r.path, "").splitlines()
        code = line or next((ln.strip() for ln in lines[r.start - 1 : r.end] if ln.strip()), "")
        where = f"{r.function}()" if r.function else "this module-level code"
        return (
            f"R{r.index}\nThe root cause is in {where}: the line `{code}` computes the wrong "
            f"result for this input, and the fix has to change it."
        )

    # -- rewrite --------------------------------------------------------------------
    def _rewrite(self, wrong: bool) -> str:
        edits = self.edits
        if not edits:
            return "I cannot fix this."
        if wrong and self.decoys:
            edits = tuple(_aimed_at(e, self.decoys[0]) for e in edits)
        return render_edits(edits)


def _aimed_at(e: ModelEdit, path: str) -> ModelEdit:
    if isinstance(e, SearchReplace):
        return SearchReplace(path, e.search, e.replace)
    if isinstance(e, FunctionRewrite):
        return FunctionRewrite(path, e.qualname, e.new_source)
    head = f"--- a/{path}\n+++ b/{path}\n"
    return UnifiedDiff(path, head + e.diff.split("\n", 2)[2])


def oracle_profile(noise: OracleNoise | None) -> SimProfile:
    """A fast endpoint (clean), or one that waits ``noise.ttft_s`` before the first token."""
    return SimProfile(
        name="oracle-noisy" if noise else "oracle",
        ttft_base_s=noise.ttft_s if noise else 0.01,
        prefill_s_per_token=0.0,
        decode_tps=2000.0,
        models=(ORACLE_MODEL,),
        default_max_tokens=4096,
        seed=noise.seed if noise else 0,
    )


def oracle_responder(answers: OracleAnswers, noise: OracleNoise | None) -> Responder:
    if noise is None:
        return answers.right
    return NoisyResponder(
        answers.right, answers.wrong, AnswerNoise(noise.wrong, noise.malformed, answers.draw_seed)
    )


def oracle_app(responder: Responder, noise: OracleNoise | None = None) -> Starlette:
    """The simulator app answering with ``responder`` (``app.state.engine`` serves it)."""
    return create_app(oracle_profile(noise), responder=responder)


def oracle_agent(
    make: Callable[[Mapping[str, str]], AgentRunner], noise: OracleNoise | None = None
) -> AgentRunner:
    """Each case run by ``make(env)``'s runner against an oracle of that case's gold.

    The oracle is served on loopback from this process for the case's run;
    ``env`` holds only the endpoint (``AGENTRT_BASE_URL``, ``AGENTRT_MODEL``),
    as a user would set it. The case's notes end with what the oracle answered.
    """

    async def run(case: Case, tree: Path, python_bin: Path) -> AgentOutput:
        fix = await asyncio.to_thread(load_gold_fix, case.dir)
        decoys = sorted(p for p in walk_text_files(tree) if p.endswith(".py"))
        answers = OracleAnswers(fix, case.id, seed=noise.seed if noise else 0, decoys=decoys)
        responder = oracle_responder(answers, noise)
        with serving_in_thread(oracle_app(responder, noise)) as url:
            env = {"AGENTRT_BASE_URL": url, "AGENTRT_MODEL": ORACLE_MODEL}
            out = await make(env)(case, tree, python_bin)
        said = (
            ", ".join(f"{n} {k}" for k, n in sorted(responder.drawn.items()))
            if isinstance(responder, NoisyResponder)
            else "every answer right"
        )
        note = f"oracle: rewrites as {answers.form} ({said})"
        return replace(out, notes=(*out.notes, note))

    return run
