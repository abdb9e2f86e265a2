"""Model endpoints found the way users already configure them, with no config file.

A user who has an OpenAI or Anthropic key in the environment, or a local
model server running, should get that model without writing a TOML file.
:func:`discover_endpoints` finds, in this order:

1. ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (either one): an OpenAI-compatible
   endpoint named ``openai``. Its model is ``$OPENAI_MODEL``; else, when
   the base URL is on loopback, the first model the server lists (one probe
   request to its ``/models``); else :data:`DEFAULT_OPENAI_MODEL`.
2. ``ANTHROPIC_API_KEY``: an Anthropic endpoint named ``anthropic``
   (``$ANTHROPIC_BASE_URL`` and ``$ANTHROPIC_MODEL`` if set, else
   :data:`DEFAULT_ANTHROPIC_MODEL`); needs the ``anthropic`` extra.
3. Only when neither is set: a local OpenAI-compatible server on its usual
   port (:data:`LOCAL_SERVERS`: Ollama 11434, llama.cpp's server 8080,
   vLLM 8000), each asked once ``GET http://127.0.0.1:PORT/v1/models``
   with a :data:`PROBE_TIMEOUT_S` timeout, all at once. The first port (in
   that order) that lists a model wins; its first model is used.
   ``$AGENTRT_LOCAL_PORTS`` (comma-separated ports; empty: probe none)
   replaces the ports.

The first one found serves every role that neither the TOML file nor an
``AGENTRT_*`` variable routes (see :mod:`agentrt._config`); every one found
is also an endpoint by its name, so ``AGENTRT_ROLE_JUDGE=anthropic`` works.

The probe never leaves the machine: its host is fixed to loopback (a base
URL on another host is never probed), it ignores proxy variables and
follows no redirect. With nothing listening a connection is refused at
once, so a run without a local server loses no time; a port that accepts
but does not answer costs at most the timeout, once, for all ports.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from agentrt._errors import ConfigError

__all__ = [
    "DEFAULT_ANTHROPIC_MODEL",
    "DEFAULT_OPENAI_MODEL",
    "LOCAL_SERVERS",
    "PROBE_TIMEOUT_S",
    "Discovered",
    "LocalServer",
    "Probe",
    "discover_endpoints",
    "http_probe",
    "is_loopback_host",
    "is_loopback_url",
]

# Cheap, capable defaults for a key with no model named: the run's routine map
# steps are many small calls, so a small model's price matters more than its
# ceiling. Set OPENAI_MODEL / ANTHROPIC_MODEL for another.
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
DEFAULT_ANTHROPIC_MODEL = "claude-3-5-haiku-latest"
PROBE_TIMEOUT_S = 0.3


@dataclass(frozen=True, slots=True)
class LocalServer:
    """A local OpenAI-compatible server's usual port, and the endpoint name it gets."""

    name: str
    port: int
    what: str


LOCAL_SERVERS: tuple[LocalServer, ...] = (
    LocalServer("ollama", 11434, "Ollama's port"),
    LocalServer("llamacpp", 8080, "llama.cpp server's port"),
    LocalServer("vllm", 8000, "vLLM's port"),
)

Probe = Callable[[str, float], Sequence[str] | None]
"""``(models_url, timeout_s) -> model ids``, or None when nothing answered there.

Only ever called with a loopback URL (see :func:`is_loopback_url`)."""


@dataclass(frozen=True, slots=True)
class Discovered:
    """One endpoint found in the environment or on a local port.

    ``fields`` are :class:`~agentrt._config.EndpointConfig` fields (kind,
    model, base_url, api_key_env); ``source`` says where it was found, for
    the run's first line.
    """

    name: str
    kind: str
    model: str
    source: str
    base_url: str | None = None
    api_key_env: str | None = None

    def fields(self) -> dict[str, str]:
        out = {"kind": self.kind, "model": self.model}
        if self.base_url is not None:
            out["base_url"] = self.base_url
        if self.api_key_env is not None:
            out["api_key_env"] = self.api_key_env
        return out


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` is this machine (``localhost`` or a loopback address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_loopback_url(url: str) -> bool:
    """Whether ``url``'s host is this machine (:func:`is_loopback_host`)."""
    return is_loopback_host(urlsplit(url).hostname or "")


def http_probe(
    url: str, timeout_s: float, *, transport: httpx.BaseTransport | None = None
) -> list[str] | None:
    """``GET url`` once; the ``data[].id`` an OpenAI-compatible ``/models`` lists.

    None when nothing answers, the answer is not such a list, or ``url`` is
    not on loopback (refused here, so no caller can widen the probe).
    """
    if not is_loopback_url(url):
        return None
    try:
        with httpx.Client(
            timeout=timeout_s, trust_env=False, follow_redirects=False, transport=transport
        ) as client:
            response = client.get(url)
        if response.status_code != 200:
            return None
        data = response.json().get("data")
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    if not isinstance(data, list):
        return None
    ids = [m.get("id") for m in data if isinstance(m, dict)]
    return [i for i in ids if isinstance(i, str) and i]


def _ports(env: Mapping[str, str]) -> tuple[LocalServer, ...]:
    spec = env.get("AGENTRT_LOCAL_PORTS")
    if spec is None:
        return LOCAL_SERVERS
    known = {s.port: s for s in LOCAL_SERVERS}
    out: list[LocalServer] = []
    for word in (w.strip() for w in spec.split(",")):
        if not word:
            continue
        if not word.isdigit() or not 0 < int(word) < 65536:
            raise ConfigError(f"AGENTRT_LOCAL_PORTS: {word!r} is not a port (1-65535)")
        port = int(word)
        out.append(known.get(port, LocalServer(f"port{port}", port, f"port {port}")))
    return tuple(out)


def _openai(env: Mapping[str, str], probe: Probe, timeout_s: float) -> Discovered | None:
    base = env.get("OPENAI_BASE_URL") or None
    if base is None and not env.get("OPENAI_API_KEY"):
        return None
    source = "$OPENAI_BASE_URL" if base else "$OPENAI_API_KEY"
    model = env.get("OPENAI_MODEL")
    if model:
        source += ", $OPENAI_MODEL"
    elif base is not None and is_loopback_url(base):
        listed = probe(base.rstrip("/") + "/models", timeout_s)
        model = listed[0] if listed else None
        if model:
            source += ", its first listed model"
    return Discovered(
        "openai",
        "openai",
        model or DEFAULT_OPENAI_MODEL,
        source,
        base_url=base,
        api_key_env="OPENAI_API_KEY" if env.get("OPENAI_API_KEY") else None,
    )


def _anthropic(env: Mapping[str, str]) -> Discovered | None:
    if not env.get("ANTHROPIC_API_KEY"):
        return None
    model = env.get("ANTHROPIC_MODEL")
    return Discovered(
        "anthropic",
        "anthropic",
        model or DEFAULT_ANTHROPIC_MODEL,
        "$ANTHROPIC_API_KEY" + (", $ANTHROPIC_MODEL" if model else ""),
        base_url=env.get("ANTHROPIC_BASE_URL") or None,
        api_key_env="ANTHROPIC_API_KEY",
    )


def _local(servers: Sequence[LocalServer], probe: Probe, timeout_s: float) -> Discovered | None:
    if not servers:
        return None
    urls = [f"http://127.0.0.1:{s.port}/v1" for s in servers]
    with ThreadPoolExecutor(max_workers=len(servers)) as pool:
        answers = list(pool.map(lambda u: probe(u + "/models", timeout_s), urls))
    for server, url, listed in zip(servers, urls, answers, strict=True):
        if listed:
            return Discovered(
                server.name,
                "openai",
                listed[0],
                f"a server on localhost:{server.port} ({server.what})",
                base_url=url,
            )
    return None


def discover_endpoints(
    env: Mapping[str, str] | None = None,
    *,
    probe: Probe = http_probe,
    probe_local: bool = True,
    timeout_s: float = PROBE_TIMEOUT_S,
) -> tuple[Discovered, ...]:
    """The endpoints ``env`` and the local ports offer, the preferred one first.

    ``probe_local=False`` skips the port probe (a caller whose roles are all
    routed already needs no local server). ``probe`` is the seam tests use.
    """
    env = os.environ if env is None else env
    found = [d for d in (_openai(env, probe, timeout_s), _anthropic(env)) if d is not None]
    if not found and probe_local:
        local = _local(_ports(env), probe, timeout_s)
        if local is not None:
            found.append(local)
    return tuple(found)
