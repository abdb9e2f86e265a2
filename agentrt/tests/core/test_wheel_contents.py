"""The benchmarks stay out of agentrt's wheel, and `agentrt bench` says why.

The wheel's packages are computed from agentrt/pyproject.toml the way
setuptools' ``packages.find`` computes them (building a wheel needs the
network for its build backend; the tests never reach it). A wheel install is
stood in for by hiding ``agentrt.bench``.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from agentrt.cli import main as agentrt_main

PROJECT = Path(__file__).resolve().parents[2]  # agentrt/


def wheel_packages() -> list[str]:
    setuptools = pytest.importorskip("setuptools", reason="needs setuptools to find packages")
    find = tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["setuptools"]
    find = find["packages"]["find"]
    return setuptools.find_namespace_packages(
        where=str(PROJECT / find["where"][0]),
        include=find.get("include", ["*"]),
        exclude=find.get("exclude", []),
    )


def test_the_wheel_holds_the_runtime_but_not_the_benchmarks():
    packages = wheel_packages()
    assert {"agentrt", "agentrt.flow", "agentrt.graph", "agentrt.sim", "agentrt.data"} <= set(
        packages
    )
    assert [p for p in packages if p.split(".")[:2] == ["agentrt", "bench"]] == []


def test_bench_without_the_benchmarks_is_one_line_naming_a_checkout(monkeypatch, capsys):
    # what a wheel install looks like: agentrt is there, agentrt.bench is not
    monkeypatch.setitem(sys.modules, "agentrt.bench", None)
    monkeypatch.setitem(sys.modules, "agentrt.bench.harness", None)
    with pytest.raises(SystemExit) as e:
        agentrt_main(["bench", "--list"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "source checkout" in err and "pip install -e" in err


def test_bench_from_a_checkout_lists_the_benchmarks(capsys):
    with pytest.raises(SystemExit) as e:
        agentrt_main(["bench", "--list"])
    assert e.value.code == 0
    assert "overhead" in capsys.readouterr().out
