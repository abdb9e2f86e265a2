import pytest

from agentrt._config import load_settings
from agentrt._errors import ConfigError


def test_defaults_put_every_role_on_the_embedded_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = load_settings(env={})
    name, ep = s.endpoint_for("judge")
    assert name == "local" and ep.kind == "llama"


def test_toml_file_routes_roles_and_env_overrides(tmp_path):
    f = tmp_path / "agentrt.toml"
    f.write_text(
        """
[endpoints.vllm]
kind = "openai"
base_url = "http://gpu:8000/v1"
model = "big"
api_key_env = "VLLM_KEY"

[roles]
judge = "vllm"
"""
    )
    s = load_settings(f, env={"VLLM_KEY": "k"})
    assert s.endpoint_for("judge")[0] == "vllm"
    assert s.endpoint_for("map")[0] == "local"
    assert s.endpoints["vllm"].resolved_api_key({"VLLM_KEY": "k"}) == "k"
    s2 = load_settings(f, env={"AGENTRT_ENDPOINT_VLLM_MODEL": "small", "AGENTRT_ROLE_MAP": "vllm"})
    assert s2.endpoints["vllm"].model == "small"
    assert s2.endpoint_for("map")[0] == "vllm"


def test_env_shorthand_points_every_role_at_one_endpoint(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = load_settings(env={"AGENTRT_BASE_URL": "http://x/v1", "AGENTRT_MODEL": "m"})
    name, ep = s.endpoint_for("anything")
    assert name == "env" and ep.base_url == "http://x/v1" and ep.model == "m"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[endpoints.a\nkind=1", "not valid TOML"),
        ('[endpoints.a]\nkind = "carrier-pigeon"', "endpoints.a.kind"),
        ('[endpoints.a]\nflavour = "x"', "endpoints.a.flavour"),
        ('[roles]\njudge = "nowhere"', "unknown endpoint 'nowhere'"),
        ("endpoints = 3", "[endpoints.NAME] tables expected"),
    ],
)
def test_bad_config_gives_one_line_error(tmp_path, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as ei:
        load_settings(f, env={})
    assert message in str(ei.value) and "\n" not in str(ei.value)


def test_missing_config_file_and_bad_env_field(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml", env={})
    with pytest.raises(ConfigError, match="unknown endpoint field"):
        load_settings(None, env={"AGENTRT_ENDPOINT_X_COLOUR": "red"})


def test_role_clients_sit_behind_the_one_retrying_layer(tmp_path, monkeypatch):
    from agentrt.flow import RetryingModel, client_for_role
    from agentrt.llm import OpenAIModel

    monkeypatch.chdir(tmp_path)
    s = load_settings(env={"AGENTRT_BASE_URL": "http://127.0.0.1:9/v1", "AGENTRT_MODEL": "m"})
    c = client_for_role(s, "judge")
    assert isinstance(c, RetryingModel)
    backend = c.unwrap()
    assert isinstance(backend, OpenAIModel)
    assert backend.sdk.max_retries == 0  # the SDK never retries underneath us
    assert isinstance(client_for_role(s, "judge", resilient=False), OpenAIModel)


def test_retry_budget_is_scoped_by_configuration_not_the_process(tmp_path, monkeypatch):
    from agentrt.flow import RetryingModel, client_for_role, retry_budget

    monkeypatch.chdir(tmp_path)
    (tmp_path / "agentrt.toml").write_text("[retry]\nmax_attempts = 6\nshare = 0.5\n")
    s = load_settings(env={"AGENTRT_BASE_URL": "http://127.0.0.1:9/v1", "AGENTRT_MODEL": "m"})
    shared = retry_budget(s)
    a = client_for_role(s, "map", budget=shared)
    b = client_for_role(s, "judge", budget=shared)
    c = client_for_role(s, "judge")
    assert isinstance(a, RetryingModel) and isinstance(b, RetryingModel)
    assert isinstance(c, RetryingModel)
    assert a.budget is b.budget is shared  # one run's clients share what they are given
    assert c.budget is not shared  # and nothing else does
    assert shared.budget.rules.share == 0.5 and a.policy.max_attempts == 6
