"""Which endpoint and model serve each role: a TOML file plus environment variables.

Resolution order, later wins: built-in defaults (every role on the embedded
model), endpoints discovered the way users configure them
(``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, a local
server on its usual port: :mod:`agentrt._discovery`), the TOML file
(``--config``, else ``$AGENTRT_CONFIG``, else ``./agentrt.toml`` when
present), then ``AGENTRT_*`` environment variables. So anything said
explicitly (a TOML ``[roles]`` entry, ``AGENTRT_BASE_URL``,
``AGENTRT_ROLE_<ROLE>``) beats a discovered endpoint, and a discovered one
beats the embedded model. The first endpoint discovered serves every role
not routed explicitly; each one discovered is also an endpoint by its name
(``openai``, ``anthropic``, ``ollama``, ``llamacpp``, ``vllm``). The local
port probe runs only when asked (``probe_local=True``: ``fixbugs run`` and
``agentrt demo`` ask) and only when the default role is not routed
explicitly. The variables:

* ``AGENTRT_BASE_URL`` / ``AGENTRT_MODEL`` / ``AGENTRT_API_KEY`` — shorthand
  for one OpenAI-compatible endpoint named ``env`` that serves every role;
* ``AGENTRT_ENDPOINT_<NAME>_<FIELD>`` — set one field of endpoint ``name``
  (e.g. ``AGENTRT_ENDPOINT_VLLM_BASE_URL``);
* ``AGENTRT_ROLE_<ROLE>=<endpoint>`` — route a role (e.g. ``judge``).

Example file::

    [endpoints.local]
    kind = "llama"
    model = "smollm2-135m"

    [endpoints.vllm]
    kind = "openai"
    base_url = "http://gpu-box:8000/v1"
    model = "Qwen/Qwen2.5-7B-Instruct"
    api_key_env = "VLLM_API_KEY"
    trust = "high"                  # the default for a configured endpoint
    price_input_per_mtok = 0.15     # dollars per million tokens (optional)
    price_output_per_mtok = 0.60

    [roles]
    default = "local"
    judge = "vllm"

Trust: how far a caller lets an endpoint's judgment overrule its own
evidence (:data:`Trust`). The embedded model (``kind = "llama"``) is
``low`` unless set; any other configured endpoint is ``high`` unless
``trust = "low"``. Prices (dollars per million input / output tokens) let
a run's spend budget (:class:`agentrt.flow.SpendBudget`) count dollars as
well as tokens; an endpoint without one counts tokens only.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentrt._discovery import Probe, discover_endpoints, http_probe
from agentrt._errors import ConfigError

__all__ = [
    "DEFAULT_ROLE",
    "EndpointConfig",
    "RetryConfig",
    "Settings",
    "Trust",
    "load_settings",
]

DEFAULT_ROLE = "default"
EndpointKind = Literal["llama", "openai", "anthropic"]
Trust = Literal["low", "high"]
"""How strong an endpoint's model is held to be. ``low``: its judgment may only break
ties the evidence leaves; ``high``: it may overrule weaker evidence (grounding stays)."""


class EndpointConfig(BaseModel):
    """One model endpoint."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: EndpointKind = "openai"
    model: str = "smollm2-135m"
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    max_concurrency: int | None = Field(default=None, ge=1)
    timeout_s: float = Field(default=600.0, gt=0)
    model_path: str | None = None  # llama: a GGUF file instead of the bundled one
    n_ctx: int | None = Field(default=None, ge=256)
    chat_format: str | None = None  # llama: llama.cpp's prompt format when the GGUF has none
    trust: Trust | None = None  # None: by kind (see resolved_trust)
    price_input_per_mtok: float | None = Field(default=None, ge=0)  # dollars
    price_output_per_mtok: float | None = Field(default=None, ge=0)

    @property
    def resolved_trust(self) -> Trust:
        """The endpoint's trust: as set, else ``low`` for the embedded model, ``high`` else."""
        if self.trust is not None:
            return self.trust
        return "low" if self.kind == "llama" else "high"

    @property
    def priced(self) -> bool:
        """Whether a price is configured (an unset one of the two then counts as 0)."""
        return self.price_input_per_mtok is not None or self.price_output_per_mtok is not None

    def resolved_api_key(self, env: Mapping[str, str]) -> str | None:
        if self.api_key:
            return self.api_key
        if self.api_key_env:
            return env.get(self.api_key_env)
        return None


class RetryConfig(BaseModel):
    """The retry policy and budget of the clients built from one configuration.

    ``[retry]`` in the TOML file. The budget is scoped by configuration: the
    clients a run builds from one :class:`Settings` share one budget
    (:func:`agentrt.flow.retry_budget`), never a process-wide one. Defaults:
    4 attempts, full-jitter backoff from 0.5 s; retried requests out at once
    up to 20% of the calls in flight, never fewer than 3; during a brownout
    (40% or more of about the last 50 attempts failing) retries limited to
    2% of calls plus 1. A 429 with Retry-After is pacing: waited out, not
    counted as a failed attempt.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(default=4, ge=1)
    base_s: float = Field(default=0.5, ge=0.0)
    cap_s: float = Field(default=20.0, ge=0.0)
    share: float = Field(default=0.2, ge=0.0, le=1.0)
    min_in_flight: int = Field(default=3, ge=0)
    brownout_ratio: float = Field(default=0.4, gt=0.0, le=1.0)
    window: int = Field(default=50, ge=1)
    ratio: float = Field(default=0.02, ge=0.0, le=1.0)
    burst: float = Field(default=1.0, ge=0.0)


def _default_endpoints() -> dict[str, EndpointConfig]:
    return {"local": EndpointConfig(kind="llama", model="smollm2-135m")}


class Settings(BaseModel):
    """Endpoints by name and the endpoint each role uses."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoints: dict[str, EndpointConfig] = Field(default_factory=_default_endpoints)
    roles: dict[str, str] = Field(default_factory=lambda: {DEFAULT_ROLE: "local"})
    retry: RetryConfig = Field(default_factory=RetryConfig)
    source: str = "built-in defaults"
    # endpoint name -> where it came from ("built-in", the TOML file, "$OPENAI_BASE_URL"...)
    origins: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _roles_name_endpoints(self) -> Settings:
        for role, ep in self.roles.items():
            if ep not in self.endpoints:
                known = ", ".join(sorted(self.endpoints)) or "none"
                raise ValueError(f"role {role!r} names unknown endpoint {ep!r} (known: {known})")
        return self

    def endpoint_for(self, role: str = DEFAULT_ROLE) -> tuple[str, EndpointConfig]:
        """The endpoint serving ``role``; roles not configured use ``default``."""
        name = self.roles.get(role) or self.roles.get(DEFAULT_ROLE)
        if name is None:
            raise ConfigError(f"no endpoint for role {role!r} and no default role in {self.source}")
        return name, self.endpoints[name]

    def origin(self, name: str) -> str:
        """Where endpoint ``name`` was configured or found, in words."""
        return self.origins.get(name, self.source)

    def trust_for(self, role: str = DEFAULT_ROLE) -> Trust:
        """The trust of the endpoint serving ``role`` (:attr:`EndpointConfig.resolved_trust`)."""
        return self.endpoint_for(role)[1].resolved_trust


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None


_FIELDS = set(EndpointConfig.model_fields)


def _explicit_default(data: Mapping[str, Any], env: Mapping[str, str]) -> bool:
    """Whether the TOML file or an ``AGENTRT_*`` variable routes the default role."""
    roles = data.get("roles", {})
    return (
        (isinstance(roles, dict) and DEFAULT_ROLE in roles)
        or bool(env.get("AGENTRT_BASE_URL") or env.get("AGENTRT_MODEL"))
        or bool(env.get("AGENTRT_ROLE_" + DEFAULT_ROLE.upper()))
    )


def _apply_env(
    data: dict[str, Any],
    env: Mapping[str, str],
    source: str,
    *,
    probe: Probe,
    probe_local: bool,
) -> dict[str, Any]:
    file_endpoints = data.get("endpoints", {})
    if not isinstance(file_endpoints, dict) or not all(
        isinstance(v, dict) for v in file_endpoints.values()
    ):
        raise ConfigError("bad config: [endpoints.NAME] tables expected")
    # the embedded model is always available as "local"
    endpoints: dict[str, dict[str, Any]] = {"local": {"kind": "llama", "model": "smollm2-135m"}}
    origins = {"local": "built-in"}
    roles: dict[str, str] = {DEFAULT_ROLE: "local"}
    found = discover_endpoints(
        env, probe=probe, probe_local=probe_local and not _explicit_default(data, env)
    )
    for d in found:
        endpoints[d.name] = dict(d.fields())
        origins[d.name] = d.source
    if found:
        roles[DEFAULT_ROLE] = found[0].name
    endpoints |= {k: dict(v) for k, v in file_endpoints.items()}
    origins |= {k: source for k in file_endpoints}
    roles |= dict(data.get("roles", {}))
    if env.get("AGENTRT_BASE_URL") or env.get("AGENTRT_MODEL"):
        ep = endpoints.setdefault("env", {"kind": "openai"})
        origins["env"] = "$AGENTRT_BASE_URL / $AGENTRT_MODEL"
        if env.get("AGENTRT_BASE_URL"):
            ep["base_url"] = env["AGENTRT_BASE_URL"]
        if env.get("AGENTRT_MODEL"):
            ep["model"] = env["AGENTRT_MODEL"]
        if env.get("AGENTRT_API_KEY"):
            ep["api_key"] = env["AGENTRT_API_KEY"]
        roles = {r: "env" for r in roles} | {DEFAULT_ROLE: "env"}
    for key, value in env.items():
        if key.startswith("AGENTRT_ENDPOINT_"):
            rest = key.removeprefix("AGENTRT_ENDPOINT_")
            field = next((f for f in _FIELDS if rest.endswith("_" + f.upper())), None)
            if field is None:
                raise ConfigError(
                    f"{key}: unknown endpoint field; use one of "
                    + ", ".join(sorted(f.upper() for f in _FIELDS))
                )
            name = rest[: -len(field) - 1].lower()
            endpoints.setdefault(name, {})[field] = value
            origins.setdefault(name, f"$AGENTRT_ENDPOINT_{name.upper()}_*")
        elif key.startswith("AGENTRT_ROLE_"):
            roles[key.removeprefix("AGENTRT_ROLE_").lower()] = value
    return dict(data) | {"endpoints": endpoints, "roles": roles, "origins": origins}


def load_settings(
    path: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    *,
    probe_local: bool = False,
    probe: Probe = http_probe,
) -> Settings:
    """Read settings; raise :class:`ConfigError` with a one-line message if invalid.

    ``probe_local`` also looks for a local model server (one request per
    usual port, :mod:`agentrt._discovery`); off by default so that reading
    settings touches no socket unless an application's run asks. ``probe``
    is the request the discovery makes (a test's seam).
    """
    env = os.environ if env is None else env
    source = "built-in defaults"
    data: dict[str, Any] = {}
    if path is None and env.get("AGENTRT_CONFIG"):
        path = env["AGENTRT_CONFIG"]
    if path is None and Path("agentrt.toml").is_file():
        path = "agentrt.toml"
    if path is not None:
        data = _read_toml(Path(path))
        source = str(path)
    data = _apply_env(data, env, source, probe=probe, probe_local=probe_local)
    try:
        return Settings(**data, source=source)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "top level"
        raise ConfigError(f"bad config in {source}: {where}: {err['msg']}") from None
    except TypeError as exc:
        raise ConfigError(f"bad config in {source}: {exc}") from None
