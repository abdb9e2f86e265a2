"""A pipeline's shape: stages, what each needs, and what each costs.

Stages form a DAG: a stage runs for an item once every stage in its
``after`` has recorded its effect for that item, and it reads their results.
Each stage has its own worker count, model and (optionally) a gate such as
a rate limiter: the seam where flow control plugs in without this module
knowing about it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from agentrt._clock import Clock
from agentrt._errors import UserError
from agentrt._json import JsonObject
from agentrt.llm._protocol import ChatModel
from agentrt.queues._types import Emit, Message
from agentrt.tokens._counting import estimate_tokens
from agentrt.tokens._latency import LatencyModel

__all__ = ["Pipeline", "Stage", "StageContext", "StageFn"]


@dataclass(frozen=True, slots=True)
class StageContext:
    """What a stage function gets: the item, its upstream results, its model."""

    item: str
    job: str
    stage: str
    input: JsonObject
    upstream: Mapping[str, JsonObject]
    attempt: int
    key: str | None
    model: ChatModel | None
    clock: Clock
    # the backend's handle of the message: the same for every redelivery of
    # it, so a stage can key outside side effects by it
    delivery_id: str = ""


StageFn = Callable[[StageContext], Awaitable[JsonObject]]


@dataclass(frozen=True, slots=True)
class Stage:
    """One step of the pipeline.

    ``run`` must return a JSON-able mapping: it is the stage's effect,
    recorded once per item. It may run more than once for an item (a worker
    died mid-stage), so anything it does besides returning must be
    idempotent or keyed by (item, stage). ``serialize``: items with the same
    key never run in this stage at once. ``gate`` is entered around each
    run (a limiter, a budget); ``model`` is handed to the function.
    ``expected_output_tokens`` feeds the cost estimate that fairness uses,
    unless ``cost`` (payload → expected seconds) is given.
    """

    name: str
    run: StageFn
    after: tuple[str, ...] = ()
    concurrency: int = 1
    model: ChatModel | None = None
    gate: Callable[[], AbstractAsyncContextManager[object]] | None = None
    serialize: bool = False
    lease_s: float = 30.0
    capacity: int | None = None
    expected_output_tokens: int = 0
    cost: Callable[[JsonObject], float] | None = None


@dataclass(frozen=True)
class Pipeline:
    """Validated stages in dependency order, with bounded queues between them.

    ``capacity`` bounds every stage's queue (a stage may set its own): a
    producer facing a full queue waits instead of growing it.
    """

    stages: Sequence[Stage]
    name: str = "pipeline"
    capacity: int = 64
    latency: LatencyModel = field(default_factory=LatencyModel)
    _by_name: dict[str, Stage] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name: dict[str, Stage] = {}
        for s in self.stages:
            if s.name in by_name:
                raise UserError(f"pipeline {self.name!r}: stage {s.name!r} is defined twice")
            if s.concurrency < 1:
                raise UserError(f"stage {s.name!r}: concurrency must be at least 1")
            by_name[s.name] = s
        for s in self.stages:
            for dep in s.after:
                if dep not in by_name:
                    raise UserError(f"stage {s.name!r} runs after unknown stage {dep!r}")
        order: list[Stage] = []
        state: dict[str, int] = {}  # 1 visiting, 2 done

        def visit(s: Stage) -> None:
            if state.get(s.name) == 2:
                return
            if state.get(s.name) == 1:
                raise UserError(f"pipeline {self.name!r}: stages form a cycle at {s.name!r}")
            state[s.name] = 1
            for dep in s.after:
                visit(by_name[dep])
            state[s.name] = 2
            order.append(s)

        for s in self.stages:
            visit(s)
        object.__setattr__(self, "stages", tuple(order))
        object.__setattr__(self, "_by_name", by_name)

    # -- shape --------------------------------------------------------------
    def stage(self, name: str) -> Stage:
        try:
            return self._by_name[name]
        except KeyError:
            known = ", ".join(s.name for s in self.stages)
            raise UserError(
                f"pipeline {self.name!r} has no stage {name!r}; known: {known}"
            ) from None

    @property
    def roots(self) -> tuple[Stage, ...]:
        return tuple(s for s in self.stages if not s.after)

    def downstream(self, name: str) -> tuple[Stage, ...]:
        return tuple(s for s in self.stages if name in s.after)

    def descendants(self, name: str) -> set[str]:
        out: set[str] = set()
        todo = [name]
        while todo:
            for d in self.downstream(todo.pop()):
                if d.name not in out:
                    out.add(d.name)
                    todo.append(d.name)
        return out

    def capacity_of(self, name: str) -> int:
        return self.stage(name).capacity or self.capacity

    # -- cost ---------------------------------------------------------------
    def stage_cost(self, stage: Stage, payload: JsonObject) -> float:
        """Expected seconds of ``stage`` for an item, from token math."""
        if stage.cost is not None:
            return stage.cost(payload)
        if not stage.expected_output_tokens:
            return 0.0
        text = json.dumps(dict(payload))
        return self.latency.call_s(estimate_tokens(text), stage.expected_output_tokens)

    def remaining_cost(self, name: str, payload: JsonObject) -> float:
        """This stage's expected seconds plus every stage after it."""
        names = {name} | self.descendants(name)
        return sum(self.stage_cost(self.stage(n), payload) for n in names)

    # -- messages -----------------------------------------------------------
    def message(
        self,
        stage: str,
        item: str,
        job: str,
        payload: JsonObject,
        key: str | None,
        group: str = "",
    ) -> Message:
        cost = self.remaining_cost(stage, payload)
        return Message(item, stage, job, payload, key, cost, group)

    def entry_messages(
        self,
        item: str,
        job: str,
        payload: JsonObject,
        key: str | None = None,
        group: str = "",
    ) -> list[Message]:
        """The item's messages to the root stages; ``group`` is its job's fairness group."""
        return [self.message(s.name, item, job, payload, key, group) for s in self.roots]

    def emits_after(self, m: Message) -> list[Emit]:
        """Messages to send when ``m``'s stage finishes (joins wait for all inputs).

        They keep ``m``'s job and group, so every stage shares its workers
        between the same groups."""
        return [
            Emit(self.message(d.name, m.item, m.job, m.payload, m.key, m.group), requires=d.after)
            for d in self.downstream(m.stage)
        ]
