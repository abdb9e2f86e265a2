"""Profiles, profile files and the ``sim serve`` command's error handling."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from agentrt._errors import ConfigError, UnknownProfile, UserError
from agentrt.sim import PROFILES, get_profile, load_profile_file
from agentrt.sim._cli import sim_app
from agentrt.sim._limits import format_duration


def test_named_profiles_exist_with_documented_defaults() -> None:
    assert {"default", "fast", "knee", "flaky", "ratelimited", "hosted", "7b"} <= set(PROFILES)
    d = get_profile("default")
    assert (d.ttft_base_s, d.prefill_s_per_token, d.decode_tps, d.slots) == (
        0.2,
        0.05e-3,
        50.0,
        16,
    )
    assert get_profile("flaky").faults.total() > 0
    assert get_profile("ratelimited").rpm is not None


def test_overrides_are_validated_and_merge_faults() -> None:
    p = get_profile("flaky", faults={"error_500": 0.5}, slots=3)
    assert p.slots == 3 and p.faults.error_500 == 0.5
    assert p.faults.error_503 == get_profile("flaky").faults.error_503
    with pytest.raises(ConfigError, match="slots"):
        get_profile("default", slots=0)
    with pytest.raises(ConfigError, match="more than 1"):
        get_profile("default", faults={"error_500": 0.7, "reset": 0.7})


def test_unknown_profile_lists_known_names_in_one_line() -> None:
    with pytest.raises(UnknownProfile) as exc:
        get_profile("nope")
    msg = str(exc.value)
    assert isinstance(exc.value, UserError)
    assert "\n" not in msg and "'nope'" in msg
    assert all(name in msg for name in PROFILES)


def test_profile_file_toml_extends_a_named_profile(tmp_path: Path) -> None:
    f = tmp_path / "mine.toml"
    f.write_text('extends = "knee"\nslots = 4\nfault_window = [1.0, 2.0]\n[faults]\nreset = 0.1\n')
    p = load_profile_file(f)
    assert p.name == "mine" and p.slots == 4 and p.aggregate_tps == 500.0
    assert p.faults.reset == 0.1 and p.fault_window == (1.0, 2.0)


def test_profile_file_json(tmp_path: Path) -> None:
    f = tmp_path / "p.json"
    f.write_text('{"name": "j", "decode_tps": 10, "rpm": 5}')
    p = load_profile_file(f)
    assert (p.name, p.decode_tps, p.rpm, p.slots) == ("j", 10.0, 5, 16)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("slots = [", "not valid"),
        ("decode_tps = -1", "decode_tps"),
        ("bogus = 1", "bogus"),
        ('extends = "zzz"', "unknown simulator profile"),
    ],
)
def test_profile_file_errors_are_one_line(tmp_path: Path, content: str, fragment: str) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(content)
    with pytest.raises(ConfigError) as exc:
        load_profile_file(f)
    assert fragment in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(ConfigError, match="cannot read"):
        load_profile_file(tmp_path / "missing.toml")


def test_format_duration() -> None:
    assert format_duration(0.25) == "250ms"
    assert format_duration(1.5) == "1.5s"
    assert format_duration(123.0) == "2m3s"


def _cli() -> typer.Typer:
    root = typer.Typer()
    root.add_typer(sim_app, name="sim")
    return root


def test_cli_unknown_profile_exits_2_with_one_line() -> None:
    result = CliRunner().invoke(_cli(), ["sim", "serve", "--profile", "nope"])
    assert result.exit_code == 2
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "unknown simulator profile 'nope'" in lines[0]
    assert "Traceback" not in result.output


def test_cli_bad_profile_file_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        _cli(), ["sim", "serve", "--profile-file", str(tmp_path / "none.toml")]
    )
    assert result.exit_code == 2 and "cannot read" in result.stderr
