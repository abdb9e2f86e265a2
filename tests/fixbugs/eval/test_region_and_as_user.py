"""The root-cause region metric and the as-user environment."""

from __future__ import annotations

import sys
from pathlib import Path

from fixbugs.eval.as_user import _shows_failing, user_shell_env
from fixbugs.eval.score import Gold, region_hit

GOLD = Gold(frozenset({"pkg/a.py"}), (("pkg/a.py", 20, 22), ("pkg/a.py", 40, 40)), "")


def test_region_hit_is_right_file_within_three_lines_of_a_hunk_at_most_20_lines_wide():
    assert region_hit(("pkg/a.py", 10, 17), GOLD)  # ends 3 lines before the hunk
    assert not region_hit(("pkg/a.py", 10, 16), GOLD)  # 4 lines away
    assert region_hit(("./pkg/a.py", 43, 50), GOLD)  # 3 lines after the second hunk
    assert not region_hit(("pkg/b.py", 20, 22), GOLD)  # right lines, wrong file
    assert region_hit(("pkg/a.py", 15, 34), GOLD)  # covering is overlapping (20 lines)
    assert not region_hit(("pkg/a.py", 15, 35), GOLD)  # 21 lines: too wide to count
    assert not region_hit(("pkg/a.py", 1, 100), GOLD)  # "somewhere in the file" earns nothing
    assert not region_hit(None, GOLD)


def test_user_shell_env_is_the_activated_venv_and_nothing_from_the_eval(tmp_path: Path):
    own_bin = str(Path(sys.prefix) / "bin")
    base = {
        "PATH": f"{own_bin}:/usr/bin:/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "AGENTRT_CONFIG": "/secret.toml",
        "PYTHONPATH": "/eval/src",
    }
    env = user_shell_env(tmp_path / "venv", base)
    assert env["VIRTUAL_ENV"] == str(tmp_path / "venv")
    assert env["PATH"] == f"{tmp_path / 'venv' / 'bin'}:/usr/bin:/bin"
    assert set(env) == {"VIRTUAL_ENV", "PATH", "HOME", "LANG"}


def test_parametrized_ids_count_as_the_named_test():
    outcomes = {"t.py::test_a[x]": "passed", "t.py::test_a[y]": "failed", "t.py::test_b": "passed"}
    assert _shows_failing("t.py::test_a", outcomes)
    assert not _shows_failing("t.py::test_b", outcomes)
    assert not _shows_failing("t.py::test_c", outcomes)
    assert _shows_failing("t.py::C", {"t.py::C::test_x": "passed", "t.py::C::test_y": "error"})
