"""Model endpoints checked before any work, and counted after it.

Before a run, each configured endpoint gets one request (a one-token
completion): an endpoint that cannot be reached, refuses the credentials or
does not serve the model is a :class:`ModelUnavailable` (a user error: one
line naming the endpoint and the problem, exit 2), the same rule as
``agentrt demo``. The embedded model has no endpoint: its weights file must
exist.

An endpoint that fails *during* the run does not stop it: the stages fall
back on static evidence, and :func:`model_failures` counts the failed calls
so the report can say ``model unavailable: N of M calls failed`` and the
CLI can exit 3.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentrt import (
    EndpointConfig,
    EndpointUnreachable,
    ProviderError,
    Settings,
    UnknownModel,
    UserError,
)
from agentrt.llm import ChatRequest, ModelClient, make_client
from agentrt.metrics import CallRecord
from fixbugs.run.model_steps import ModelSteps

__all__ = [
    "ModelFailures",
    "ModelUnavailable",
    "check_client",
    "model_failures",
    "models_line",
    "preflight",
    "role_endpoints",
]

# Errors of the model's answer, not of its availability.
_ANSWER_ERRORS = ("StructuredOutputError",)


class ModelUnavailable(UserError):
    """A configured model endpoint cannot serve this run."""


@dataclass(frozen=True, slots=True)
class ModelFailures:
    failed: int
    total: int

    @property
    def degraded(self) -> bool:
        return self.failed > 0

    def line(self) -> str:
        return f"model unavailable: {self.failed} of {self.total} calls failed"


def role_endpoints(settings: Settings, roles: Iterable[str]) -> list[tuple[str, EndpointConfig]]:
    """The distinct endpoints serving ``roles``, in first-use order."""
    seen: dict[str, EndpointConfig] = {}
    for role in roles:
        name, cfg = settings.endpoint_for(role)
        seen.setdefault(name, cfg)
    return list(seen.items())


def _where(name: str, cfg: EndpointConfig) -> str:
    return f"model endpoint {name!r} ({cfg.base_url or cfg.kind}, model {cfg.model})"


async def check_client(client: ModelClient, where: str, *, timeout_s: float = 60.0) -> None:
    """One one-token completion; a :class:`ModelUnavailable` naming ``where`` if it fails."""
    req = ChatRequest.of("ping", max_tokens=1, stage="preflight")
    try:
        await asyncio.wait_for(client.complete(req), timeout_s)
    except TimeoutError:
        raise ModelUnavailable(f"{where}: no answer within {timeout_s:.0f} s") from None
    except EndpointUnreachable as exc:
        raise ModelUnavailable(f"{where}: unreachable ({_first_line(exc)})") from None
    except UnknownModel as exc:
        raise ModelUnavailable(f"{where}: unknown model ({_first_line(exc)})") from None
    except ProviderError as exc:
        if exc.status in (401, 403):
            raise ModelUnavailable(
                f"{where}: credentials refused ({exc.status}); check api_key / api_key_env"
            ) from None
        if exc.status == 404:
            raise ModelUnavailable(f"{where}: unknown model or path (404)") from None
        raise ModelUnavailable(f"{where}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


async def preflight(
    settings: Settings,
    roles: Sequence[str] = ("map", "judge"),
    *,
    make: Callable[[EndpointConfig, str], ModelClient] | None = None,
    timeout_s: float = 60.0,
) -> None:
    """Check each endpoint serving ``roles``; :class:`ModelUnavailable` on the first bad one."""
    for name, cfg in role_endpoints(settings, roles):
        where = _where(name, cfg)
        if cfg.kind == "llama":
            _check_weights(cfg, where)
            continue
        short = cfg.model_copy(update={"timeout_s": min(cfg.timeout_s, timeout_s)})
        client = make(short, name) if make else make_client(short, name=name)
        try:
            await check_client(client, where, timeout_s=timeout_s)
        finally:
            await client.aclose()


# FixBugs' extra that installs the embedded model (it compiles llama-cpp-python)
LOCAL_MODEL_EXTRA = "pip install -e '.[local-model]' in FixBugs' checkout"


def embedded_installed() -> bool:
    """Whether llama-cpp-python, which runs the embedded model, is installed."""
    return importlib.util.find_spec("llama_cpp") is not None


def _check_weights(cfg: EndpointConfig, where: str) -> None:
    if not embedded_installed():
        raise ModelUnavailable(
            f"{where}: the embedded model is not installed ({LOCAL_MODEL_EXTRA})"
        )
    if cfg.model_path is not None:
        path = Path(cfg.model_path).expanduser()
    else:
        from agentrt.llm import default_model_path

        try:
            path = default_model_path()
        except UserError as exc:
            raise ModelUnavailable(f"{where}: {_first_line(exc)}") from None
    if not path.is_file():
        raise ModelUnavailable(f"{where}: model file {path} does not exist")


# what a run does with no model step, and how a user gets one (the first line says it)
WITHOUT_MODEL = "the run ranks, reproduces and repairs from static evidence alone"
HOW_TO_GET_ONE = (
    "set OPENAI_API_KEY, OPENAI_BASE_URL or ANTHROPIC_API_KEY, or run Ollama, llama.cpp's "
    "server or vLLM on its usual port, for one"
)


def _serving(name: str, cfg: EndpointConfig, settings: Settings) -> str:
    at = f" at {cfg.base_url}" if cfg.base_url else ""
    origin = settings.origin(name)
    return f"{name}: {cfg.model}{at} ({cfg.kind}, trust {cfg.resolved_trust}, from {origin})"


def models_line(settings: Settings | None, steps: ModelSteps | None) -> str:
    """The run's first line: which model serves which role, or that none is used and why.

    ``settings`` None: the run was told to use no model (``--no-model``).
    ``steps``: the model steps the run takes (None: not decided here).
    """
    if settings is None:
        return f"models: none (--no-model): {WITHOUT_MODEL}"
    if steps is not None and not steps.enabled:
        name, cfg = settings.endpoint_for("map")
        why = "is given no step (--model-steps none)"
        if cfg.kind == "llama":
            why = "takes no step by default (MEASUREMENTS.md, model steps)"
            if not embedded_installed():
                why += f" and is not installed ({LOCAL_MODEL_EXTRA} adds it)"
        return f"models: none used: {name} ({cfg.model}) {why}; {WITHOUT_MODEL}; {HOW_TO_GET_ONE}"
    by_endpoint: dict[str, list[str]] = {}
    for role in ("map", "judge"):
        by_endpoint.setdefault(settings.endpoint_for(role)[0], []).append(role)
    parts = [
        f"{' and '.join(roles)} → {_serving(name, settings.endpoints[name], settings)}"
        for name, roles in by_endpoint.items()
    ]
    line = "models: " + "; ".join(parts)
    if steps is not None:
        line += f"; steps: {steps.describe()}"
    return line


def model_failures(records: Iterable[CallRecord]) -> ModelFailures:
    """Model calls of the run that failed for lack of a model (not for a bad answer)."""
    model = [r for r in records if r.kind == "model" and r.stage != "preflight"]
    failed = [
        r for r in model if r.outcome == "error" and not (r.error or "").startswith(_ANSWER_ERRORS)
    ]
    return ModelFailures(len(failed), len(model))
