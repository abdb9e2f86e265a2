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
    from agentrt.flow import RetryingModel, SpendingModel, client_for_role
    from agentrt.llm import OpenAIModel

    monkeypatch.chdir(tmp_path)
    s = load_settings(env={"AGENTRT_BASE_URL": "http://127.0.0.1:9/v1", "AGENTRT_MODEL": "m"})
    c = client_for_role(s, "judge")
    # the spend budget's layer outermost, over the one retrying layer
    assert isinstance(c, SpendingModel) and isinstance(c.inner, RetryingModel)
    backend = c.unwrap()
    assert isinstance(backend, OpenAIModel)
    assert backend.sdk.max_retries == 0  # the SDK never retries underneath us
    bare = client_for_role(s, "judge", resilient=False)
    assert isinstance(bare, SpendingModel) and isinstance(bare.inner, OpenAIModel)


def test_retry_budget_is_scoped_by_configuration_not_the_process(tmp_path, monkeypatch):
    from agentrt.flow import RetryingModel, client_for_role, retry_budget
    from agentrt.llm import find_layer

    monkeypatch.chdir(tmp_path)
    (tmp_path / "agentrt.toml").write_text("[retry]\nmax_attempts = 6\nshare = 0.5\n")
    s = load_settings(env={"AGENTRT_BASE_URL": "http://127.0.0.1:9/v1", "AGENTRT_MODEL": "m"})
    shared = retry_budget(s)
    a = find_layer(client_for_role(s, "map", budget=shared), RetryingModel)
    b = find_layer(client_for_role(s, "judge", budget=shared), RetryingModel)
    c = find_layer(client_for_role(s, "judge"), RetryingModel)
    assert a is not None and b is not None and c is not None
    assert a.budget is b.budget is shared  # one run's clients share what they are given
    assert c.budget is not shared  # and nothing else does
    assert shared.budget.rules.share == 0.5 and a.policy.max_attempts == 6


def test_trust_is_low_for_the_embedded_model_and_high_for_a_configured_endpoint(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "trust.toml"
    f.write_text(
        """
[endpoints.vllm]
kind = "openai"
base_url = "http://gpu:8000/v1"

[endpoints.careful]
kind = "anthropic"
trust = "low"

[endpoints.big_gguf]
kind = "llama"
trust = "high"

[roles]
judge = "vllm"
map = "careful"
rewrite = "big_gguf"
"""
    )
    s = load_settings(f, env={})
    assert s.trust_for("default") == "low"  # the embedded default
    assert s.trust_for("judge") == "high"  # a configured endpoint, trust unset
    assert s.trust_for("map") == "low"  # set low
    assert s.trust_for("rewrite") == "high"  # a local model the user vouches for
    assert load_settings(env={}).trust_for("judge") == "low"
    shorthand = load_settings(env={"AGENTRT_BASE_URL": "http://x/v1", "AGENTRT_MODEL": "m"})
    assert shorthand.trust_for("judge") == "high"


def test_trust_and_prices_can_be_set_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {
        "AGENTRT_BASE_URL": "http://x/v1",
        "AGENTRT_MODEL": "m",
        "AGENTRT_ENDPOINT_ENV_TRUST": "low",
        "AGENTRT_ENDPOINT_ENV_PRICE_INPUT_PER_MTOK": "2.5",
        "AGENTRT_ENDPOINT_ENV_PRICE_OUTPUT_PER_MTOK": "10",
    }
    s = load_settings(env=env)
    _, ep = s.endpoint_for("judge")
    assert s.trust_for("judge") == "low"
    assert (ep.price_input_per_mtok, ep.price_output_per_mtok) == (2.5, 10.0)
    assert ep.priced and not s.endpoints["local"].priced


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"AGENTRT_ENDPOINT_LOCAL_TRUST": "medium"}, "endpoints.local.trust"),
        ({"AGENTRT_ENDPOINT_LOCAL_PRICE_INPUT_PER_MTOK": "-1"}, "price_input_per_mtok"),
        ({"AGENTRT_ENDPOINT_LOCAL_PRICE_OUTPUT_PER_MTOK": "cheap"}, "price_output_per_mtok"),
    ],
)
def test_a_bad_trust_or_price_is_a_one_line_config_error(tmp_path, monkeypatch, env, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as ei:
        load_settings(env=env)
    assert message in str(ei.value) and "\n" not in str(ei.value)


def test_a_bad_trust_in_the_file_is_a_config_error(tmp_path):
    f = tmp_path / "agentrt.toml"
    f.write_text('[endpoints.a]\nkind = "openai"\ntrust = "total"\n')
    with pytest.raises(ConfigError, match=r"endpoints\.a\.trust: Input should be 'low' or 'high'"):
        load_settings(f, env={})
