"""Endpoints found as users configure them: provider keys, OPENAI_BASE_URL, a local server.

No test here opens a socket to anything but loopback, and the port probe is
injected (a function or an httpx transport), so the machine's own servers
never change a result.
"""

from __future__ import annotations

import socket

import httpx
import pytest

from agentrt import ConfigError, load_settings
from agentrt._discovery import (
    DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_OPENAI_MODEL,
    discover_endpoints,
    http_probe,
)

NOTHING = {"AGENTRT_LOCAL_PORTS": ""}


def _never(url: str, timeout_s: float) -> list[str] | None:
    raise AssertionError(f"no probe expected, got {url}")


def test_openai_key_alone_routes_every_role_to_openai_with_the_default_model():
    s = load_settings(env={"OPENAI_API_KEY": "sk-test"}, probe=_never)
    name, cfg = s.endpoint_for("judge")
    assert (name, cfg.kind, cfg.model, cfg.base_url) == (
        "openai",
        "openai",
        DEFAULT_OPENAI_MODEL,
        None,
    )
    assert cfg.resolved_api_key({"OPENAI_API_KEY": "sk-test"}) == "sk-test"
    assert s.endpoint_for("map")[0] == "openai"
    assert s.origin("openai") == "$OPENAI_API_KEY"
    assert s.trust_for("judge") == "high"


def test_openai_model_names_the_model_and_a_remote_base_url_is_never_probed():
    s = load_settings(env={"OPENAI_BASE_URL": "https://llm.example.net/v1"}, probe=_never)
    assert s.endpoint_for()[1].model == DEFAULT_OPENAI_MODEL  # not asked: not on loopback
    s = load_settings(
        env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_MODEL": "m7"}, probe=_never
    )
    assert s.endpoint_for()[1].model == "m7"


def test_a_loopback_base_url_is_asked_once_which_model_it_serves():
    asked: list[str] = []

    def probe(url: str, timeout_s: float) -> list[str]:
        asked.append(url)
        assert timeout_s <= 1.0
        return ["sim-model", "other"]

    s = load_settings(env={"OPENAI_BASE_URL": "http://localhost:9999/v1/"}, probe=probe)
    assert asked == ["http://localhost:9999/v1/models"]
    assert s.endpoint_for()[1].model == "sim-model"
    assert "its first listed model" in s.origin("openai")


def test_anthropic_key_gives_an_anthropic_endpoint_and_openai_comes_first():
    s = load_settings(env={"ANTHROPIC_API_KEY": "a"}, probe=_never)
    name, cfg = s.endpoint_for("judge")
    assert (name, cfg.kind, cfg.model) == ("anthropic", "anthropic", DEFAULT_ANTHROPIC_MODEL)
    both = load_settings(env={"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, probe=_never)
    assert both.endpoint_for()[0] == "openai"
    routed = load_settings(
        env={"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o", "AGENTRT_ROLE_JUDGE": "anthropic"},
        probe=_never,
    )
    assert (routed.endpoint_for("judge")[0], routed.endpoint_for("map")[0]) == (
        "anthropic",
        "openai",
    )


def test_explicit_settings_beat_discovered_ones(tmp_path):
    env = {"OPENAI_API_KEY": "o"}
    shorthand = load_settings(
        env=env | {"AGENTRT_BASE_URL": "http://gpu:8000/v1", "AGENTRT_MODEL": "q"}, probe=_never
    )
    assert shorthand.endpoint_for("judge")[0] == "env"
    f = tmp_path / "a.toml"
    f.write_text('[roles]\ndefault = "local"\n')
    assert load_settings(f, env=env, probe=_never).endpoint_for("judge")[0] == "local"
    f.write_text('[endpoints.openai]\nkind = "openai"\nmodel = "mine"\n')
    from_file = load_settings(f, env=env, probe=_never)
    assert from_file.endpoint_for("judge")[1].model == "mine"  # the file's endpoint, whole
    assert from_file.origin("openai") == str(f)
    field = load_settings(env=env | {"AGENTRT_ENDPOINT_OPENAI_MODEL": "m2"}, probe=_never)
    assert field.endpoint_for()[1].model == "m2"


def test_nothing_found_keeps_the_embedded_model_and_probes_only_when_asked():
    assert load_settings(env={}, probe=_never).endpoint_for()[0] == "local"
    asked: list[str] = []

    def probe(url: str, timeout_s: float) -> None:
        asked.append(url)
        return None

    s = load_settings(env={}, probe=probe, probe_local=True)
    assert s.endpoint_for()[0] == "local"
    assert sorted(asked) == sorted(
        f"http://127.0.0.1:{p}/v1/models" for p in (11434, 8080, 8000)
    )  # one request per usual port, all on loopback


def test_a_local_server_is_found_on_its_port_first_port_in_order_wins():
    def probe(url: str, timeout_s: float) -> list[str] | None:
        return {"8080": ["qwen2.5-7b"], "8000": ["vllm-model"]}.get(url.split(":")[2][:4])

    s = load_settings(env={}, probe=probe, probe_local=True)
    name, cfg = s.endpoint_for("judge")
    assert (name, cfg.model, cfg.base_url) == ("llamacpp", "qwen2.5-7b", "http://127.0.0.1:8080/v1")
    assert "localhost:8080" in s.origin("llamacpp")
    other = load_settings(
        env={"AGENTRT_LOCAL_PORTS": "8000"}, probe=probe, probe_local=True
    ).endpoint_for()
    assert other[0] == "vllm"


def test_no_local_probe_when_a_key_or_an_explicit_default_role_is_set():
    assert load_settings(env={"OPENAI_API_KEY": "o"}, probe=_never, probe_local=True)
    env = {"AGENTRT_BASE_URL": "http://gpu:8000/v1", "AGENTRT_MODEL": "q"}
    assert load_settings(env=env, probe=_never, probe_local=True).endpoint_for()[0] == "env"
    assert discover_endpoints(NOTHING, probe=_never) == ()


def test_bad_port_list_is_one_line_config_error():
    with pytest.raises(ConfigError, match="AGENTRT_LOCAL_PORTS: 'eighty' is not a port"):
        load_settings(env={"AGENTRT_LOCAL_PORTS": "eighty"}, probe_local=True)


def test_http_probe_reads_an_openai_models_list_and_never_leaves_loopback():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"object": "list", "data": [{"id": "llama3.2"}]})

    transport = httpx.MockTransport(handler)
    assert http_probe("http://127.0.0.1:11434/v1/models", 0.3, transport=transport) == ["llama3.2"]
    assert http_probe("http://example.com/v1/models", 0.3, transport=transport) is None
    assert http_probe("http://10.0.0.1:8000/v1/models", 0.3, transport=transport) is None
    assert [r.url.host for r in seen] == ["127.0.0.1"]

    def not_a_list(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>hello</html>")

    assert (
        http_probe(
            "http://127.0.0.1:8080/v1/models", 0.3, transport=httpx.MockTransport(not_a_list)
        )
        is None
    )


def test_nothing_listening_is_answered_at_once():
    # a port the kernel just gave and took back: nothing listens there
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert http_probe(f"http://127.0.0.1:{port}/v1/models", 0.3) is None


def test_a_port_that_accepts_but_never_answers_gives_up_at_the_timeout():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)  # accepts the connection, never answers: the timeout ends the wait
        port = server.getsockname()[1]
        assert http_probe(f"http://127.0.0.1:{port}/v1/models", 0.2) is None
