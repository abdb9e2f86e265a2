"""`agentrt bench NAME --set KEY=VALUE`: options are typed, converted once, by field type."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agentrt._errors import UserError
from agentrt.bench.harness import list_benchmarks, parse_options
from agentrt.cli import main as agentrt_main


@dataclass(frozen=True, slots=True)
class _Opts:
    n: int = 3
    rate: float = 1.5
    local: bool = True
    profile: str = "default"
    sizes: tuple[int, ...] = (1, 2)


def test_no_settings_give_the_defaults() -> None:
    assert parse_options(_Opts, []) == _Opts()


def test_each_setting_is_converted_by_its_field_type() -> None:
    got = parse_options(_Opts, ["n=10", "rate=2", "local=off", "profile=knee", "sizes=50, 100,"])
    assert got == _Opts(n=10, rate=2.0, local=False, profile="knee", sizes=(50, 100))
    assert isinstance(got.rate, float)
    assert parse_options(_Opts, ["local=YES"]).local is True
    assert parse_options(_Opts, ["profile=a=b"]).profile == "a=b"  # split at the first '='


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("colour=red", "expected KEY=VALUE with KEY one of n, rate, local, profile, sizes"),
        ("n", "expected KEY=VALUE"),
        ("n=many", "--set 'n=many': 'many' is not an int"),
        ("rate=fast", "'fast' is not a float"),
        ("local=maybe", "'maybe' is not a bool (true/false)"),
        ("sizes=1,x", "'1,x' is not a comma-separated list of int"),
    ],
)
def test_a_bad_setting_is_a_one_line_user_error(setting: str, message: str) -> None:
    with pytest.raises(UserError) as e:
        parse_options(_Opts, [setting])
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_every_benchmark_declares_settable_options_with_defaults() -> None:
    benches = list_benchmarks()
    assert len(benches) >= 15
    for b in benches:
        # every field set back to its own default, through the strings the CLI passes
        fields = type(b.defaults).__dataclass_fields__
        assert fields, b.name
        settings = [f"{k}={_as_text(getattr(b.defaults, k))}" for k in fields]
        assert b.configure(settings).options == b.defaults, b.name


def _as_text(value: object) -> str:
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def test_the_cli_names_the_field_when_a_value_does_not_convert(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as e:
        agentrt_main(["bench", "overhead", "--set", "rounds=three"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "'three' is not an int" in err and "Traceback" not in err
