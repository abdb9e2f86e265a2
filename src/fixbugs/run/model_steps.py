"""Which model steps a run takes, and how long each may take.

Five stages can ask a model, in six steps: the analysis maps log chunks (``log_map``), file
relevance reads candidate files (``relevance``), the reproduction asks the
judge for a script when nothing else reproduced the bug (``reproduce``), the
root cause asks the judge (``judgment``), the fix stage asks for a rewrite
(``rewrite``) and scores candidates' naturalness (``naturalness``). Each costs seconds of
prefill and decode, and a step whose answer changes no outcome (no rank, no
region, no validated fix) only makes the user wait. So a run names the steps
it takes: every step on an endpoint the config trusts (``trust = "high"``),
and on a low-trust one (the embedded default) only the steps measured to
change an outcome (``MEASUREMENTS.md``, "model steps"). ``--model-steps``
overrides both, which is how those measurements are made.

Each step has a deadline: an answer that is late is dropped with a note and
the run goes on from the static evidence, so a slow model bounds, and never
stalls, the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, get_args

import typer

from agentrt import Trust
from fixbugs.errors import InputError

__all__ = [
    "ALL_STEPS",
    "HIGH_TRUST_DEADLINE_S",
    "JUDGE_STEPS",
    "LOW_TRUST_STEPS",
    "MODEL_STEPS",
    "NO_STEPS",
    "ModelStep",
    "ModelSteps",
    "ModelStepsOption",
]

ModelStep = Literal["log_map", "relevance", "reproduce", "judgment", "rewrite", "naturalness"]
MODEL_STEPS: tuple[ModelStep, ...] = get_args(ModelStep)
# the steps the judge role serves; the others are the map role's routine steps
JUDGE_STEPS: frozenset[ModelStep] = frozenset({"reproduce", "judgment", "rewrite"})

# Seconds each step may take before its answer is dropped. Set from the
# embedded model's measured cost on 2 cores (MEASUREMENTS.md, "model steps"):
# about twice the slowest answer seen, so a step that is on finishes on a loaded
# machine and a stalled endpoint costs at most this much.
_DEADLINES_S: dict[ModelStep, float] = {
    "log_map": 30.0,
    "relevance": 60.0,
    # not measured on the embedded model (off on low trust): one script of a few hundred
    # tokens, about what a rewrite writes, with a longer prompt
    "reproduce": 60.0,
    "judgment": 45.0,
    "rewrite": 30.0,
    "naturalness": 30.0,
}
# A trusted endpoint is a strong remote model: 20 s before the first token and a
# multi-hunk rewrite of a few hundred tokens are normal, so it gets minutes.
HIGH_TRUST_DEADLINE_S = 300.0


@dataclass(frozen=True, slots=True)
class ModelSteps:
    """The model steps a run takes (each with its deadline)."""

    enabled: frozenset[ModelStep]

    def on(self, step: ModelStep) -> bool:
        return step in self.enabled

    def without(self, step: ModelStep) -> ModelSteps:
        """These steps but ``step``."""
        return ModelSteps(self.enabled - {step})

    @staticmethod
    def deadline_s(step: ModelStep, trust: Trust = "low") -> float:
        """How long ``step`` may take on an endpoint of ``trust``."""
        return _DEADLINES_S[step] if trust == "low" else HIGH_TRUST_DEADLINE_S

    @classmethod
    def by_trust(cls, map_trust: Trust, judge_trust: Trust) -> ModelSteps:
        """The default: every step of a high-trust role, the measured ones of a low one."""
        return cls(
            frozenset(
                s
                for s in MODEL_STEPS
                if (judge_trust if s in JUDGE_STEPS else map_trust) == "high"
                or LOW_TRUST_STEPS.on(s)
            )
        )

    def spec(self) -> str:
        """The ``--model-steps`` value that parses back to these steps."""
        if self == ALL_STEPS:
            return "all"
        return ",".join(s for s in MODEL_STEPS if s in self.enabled) or "none"

    def describe(self) -> str:
        """``relevance, judgment`` in the steps' pipeline order, or ``none``."""
        return ", ".join(s for s in MODEL_STEPS if s in self.enabled) or "none"

    @classmethod
    def parse(cls, spec: str) -> ModelSteps:
        """``all``, ``none``, or a comma-separated list of step names.

        A bad name is an :class:`InputError` naming the valid ones (one line,
        exit 2), so a typo never silently turns a step off.
        """
        words = [w.strip() for w in spec.split(",") if w.strip()]
        if words == ["all"]:
            return ALL_STEPS
        if words == ["none"]:
            return NO_STEPS
        bad = [w for w in words if w not in MODEL_STEPS]
        if bad or not words:
            raise InputError(
                f"--model-steps: unknown step {', '.join(bad) or repr(spec)}; "
                f"give all, none or some of {', '.join(MODEL_STEPS)}"
            )
        return cls(frozenset(s for s in MODEL_STEPS if s in words))


ALL_STEPS = ModelSteps(frozenset(MODEL_STEPS))
NO_STEPS = ModelSteps(frozenset())
# The low-trust default: the steps that changed an outcome on the dev sets with
# the embedded model (MEASUREMENTS.md, "model steps"). None did: with every
# step, no case of dev (20) or dev-wide (16) changed its gold file's rank, its
# region or its root cause, and the rewrite and naturalness steps left dev's
# validated fixes the same seven; the steps cost 30-60 s a case. Nor, on
# 2026-12-07, on 36 swebench-dev issues or the pool's 37 issue texts, even at
# high trust, where the judge's answers named no listed region and were discarded.
# Nor, on 2026-12-08, the reproduce step on those 37 texts (no script of SmolLM2's
# or Gemma 3 270M's failed as the issue says) or Gemma's naturalness on dev.
LOW_TRUST_STEPS = NO_STEPS
# the run's note when no step is taken by default, so no model is loaded
NO_DEFAULT_STEPS = (
    "model steps: none (on the low-trust embedded model no step changed a rank, a region "
    "or a validated fix on the dev sets, swebench-dev or the pool's issue texts, nor wrote a "
    "reproduction of a pool issue, MEASUREMENTS.md; --model-steps all takes them)"
)

# the --model-steps option of `fixbugs run` and `fixbugs eval`, parsed by ModelSteps.parse
ModelStepsOption = Annotated[
    str | None,
    typer.Option(
        "--model-steps",
        help="Model steps to take: all, none, or some of "
        "log_map,relevance,reproduce,judgment,rewrite,naturalness (default: as the "
        "endpoints' trust allows).",
    ),
]
