"""Parking a session's context on the embedded llama.cpp model during tool waits.

The embedded model holds one context in its KV cache. When session A waits
on a tool and session B uses the model, A's context is overwritten and A's
next call prefills it all again. Parking saves A's sequence state (the KV
cache through llama.cpp's ``llama_state_seq_get_data``, plus the token ids)
to host memory or disk, and restoring it before A's next call lets
llama-cpp-python's prefix matching evaluate only the new tokens.

Only the sequence's KV state is saved, not llama-cpp-python's
``save_state``, which also copies up to ``n_batch × n_vocab`` floats of
logits (about 100 MB for SmolLM2) that a later generation recomputes
anyway: the next call always evaluates at least one token.

:class:`SessionParker` is the driver: at each tool wait it asks
:func:`~agentrt.context._policy.decide` with costs its :class:`CostMeter`
measured on this machine, and keeps, parks or drops the context.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import itertools
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrt._errors import ProviderError
from agentrt.context._policy import Choice, CostMeter, Decision, decide

if TYPE_CHECKING:
    from llama_cpp import Llama

    from agentrt.llm._llama_backend import LlamaModel

__all__ = ["ParkedState", "SessionParker", "ToolWait", "restore_sequence", "save_sequence"]

_SEQ = 0  # llama-cpp-python runs every generation as sequence 0


def _raw() -> Any:
    return importlib.import_module("llama_cpp")


@dataclass(frozen=True, slots=True)
class ParkedState:
    """A saved context: its token ids and its KV bytes (in memory or in a file)."""

    tokens: tuple[int, ...]
    nbytes: int
    data: bytes | None = field(default=None, repr=False)
    path: Path | None = None

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    def kv_bytes(self) -> bytes:
        if self.data is not None:
            return self.data
        assert self.path is not None  # invariant: exactly one of data, path is set
        return self.path.read_bytes()


def save_sequence(llama: Llama, *, path: Path | None = None) -> ParkedState:
    """Copy the model's current context out (blocking; hold the model's lock)."""
    lib = _raw()
    ctx = llama._ctx.ctx
    n = int(llama.n_tokens)
    tokens = tuple(int(t) for t in llama.input_ids[:n])
    size = int(lib.llama_state_seq_get_size(ctx, _SEQ))
    buf = (ctypes.c_uint8 * size)()
    written = int(lib.llama_state_seq_get_data(ctx, buf, size, _SEQ))
    data = ctypes.string_at(buf, written)
    if path is None:
        return ParkedState(tokens, written, data=data)
    path.write_bytes(data)
    return ParkedState(tokens, written, path=path)


def restore_sequence(llama: Llama, state: ParkedState) -> None:
    """Put a parked context back as the model's current one (blocking; hold the lock)."""
    lib = _raw()
    data = state.kv_bytes()
    llama._ctx.kv_cache_seq_rm(-1, 0, -1)
    buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    if int(lib.llama_state_seq_set_data(llama._ctx.ctx, buf, len(data), _SEQ)) != len(data):
        llama.reset()  # type: ignore[no-untyped-call]
        raise ProviderError("the embedded model could not restore a parked context", status=None)
    llama.input_ids[: state.n_tokens] = state.tokens
    llama.n_tokens = state.n_tokens
    # the logits are stale: generate() re-evaluates at least the last token
    llama._requires_eval = True


@dataclass(slots=True)
class ToolWait:
    """One tool wait of a session: the decision taken and, if parked, the state."""

    decision: Decision
    context_tokens: int
    state: ParkedState | None = None
    save_s: float = 0.0
    restore_s: float = 0.0


class SessionParker:
    """Decides and carries out keep/park/recompute around a session's tool waits.

    ``directory`` parks to files there instead of host memory. Costs are
    measured with ``time.perf_counter`` inside the model's worker thread:
    they are engine time, the unit the policy compares.
    """

    def __init__(
        self,
        model: LlamaModel,
        *,
        meter: CostMeter | None = None,
        directory: Path | None = None,
    ) -> None:
        self.model = model
        self.meter = meter or CostMeter()
        self.directory = directory
        self._ids = itertools.count(1)

    async def probe(self, sizes: tuple[int, ...] = (128, 512)) -> None:
        """Measure prefill, save and restore at a few context sizes.

        Destroys the model's current context: run it before sessions start.
        """
        for n in sizes:
            prefill, save, restore = await self.model.exclusive(functools.partial(_probe, n=n))
            self.meter.prefill(n, prefill)
            self.meter.save(n, save)
            self.meter.restore(n, restore)

    @contextlib.asynccontextmanager
    async def tool_wait(
        self, *, expected_s: float, demand: float, force: Choice | None = None
    ) -> AsyncIterator[ToolWait]:
        """``async with parker.tool_wait(expected_s=..., demand=...) as w: await tool()``

        Enter right after the session's model call, while its context is
        the model's current one. ``demand`` is the share of the wait during
        which other sessions will use the model. ``force`` overrides the
        choice (for benchmarks comparing the options).
        """
        wait = await self.model.exclusive(
            lambda llama: self._suspend(llama, expected_s, demand, force)
        )
        try:
            yield wait
        finally:
            if wait.state is not None:
                state = wait.state
                started = time.perf_counter()
                await self.model.exclusive(lambda llama: restore_sequence(llama, state))
                wait.restore_s = time.perf_counter() - started
                self.meter.restore(state.n_tokens, wait.restore_s)
                if state.path is not None:
                    state.path.unlink(missing_ok=True)

    def _suspend(
        self, llama: Llama, expected_s: float, demand: float, force: Choice | None
    ) -> ToolWait:
        n = int(llama.n_tokens)
        decision = decide(self.meter.model(), n, wait_s=expected_s, demand=demand)
        if force is not None:
            decision = Decision(
                force, decision.keep_s, decision.park_s, decision.recompute_s, f"forced {force}"
            )
        wait = ToolWait(decision, n)
        if decision.choice == "recompute":  # drop it: free the KV now, prefill on resume
            llama.reset()  # type: ignore[no-untyped-call]
            llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        if decision.choice == "park" and n > 0:
            path = None
            if self.directory is not None:
                path = self.directory / f"agentrt-park-{id(self)}-{next(self._ids)}.kv"
            started = time.perf_counter()
            wait.state = save_sequence(llama, path=path)
            wait.save_s = time.perf_counter() - started
            self.meter.save(n, wait.save_s)
        return wait


def _probe(llama: Llama, n: int) -> tuple[float, float, float]:
    bos = llama.token_bos()
    filler = llama.tokenize(b" the quick brown fox jumps over the lazy dog", add_bos=False)
    tokens = [bos, *itertools.islice(itertools.cycle(filler), n - 1)]
    llama.reset()  # type: ignore[no-untyped-call]
    t0 = time.perf_counter()
    llama.eval(tokens)
    t1 = time.perf_counter()
    state = save_sequence(llama)
    t2 = time.perf_counter()
    restore_sequence(llama, state)
    t3 = time.perf_counter()
    llama.reset()  # type: ignore[no-untyped-call]
    return t1 - t0, t2 - t1, t3 - t2
