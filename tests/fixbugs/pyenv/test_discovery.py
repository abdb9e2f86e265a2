"""Which interpreter runs the user's tests: the four discovery cases, and never ours unasked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fixbugs.errors import InputError
from fixbugs.pyenv.coveragewheels import best_wheel
from fixbugs.pyenv.overlay import prepare_env
from fixbugs.pyenv.userenv import Interpreter, choose_interpreter, own_prefixes, probe_env

OWN = Path(sys.prefix)


def _path(*folders: Path | str) -> str:
    return os.pathsep.join(str(f) for f in folders)


def test_python_flag_wins_over_everything(user_venv: Path, tmp_path: Path):
    other = tmp_path / "elsewhere"
    env = {"VIRTUAL_ENV": str(other), "PATH": _path(user_venv.parent)}
    got = choose_interpreter(tmp_path, python=user_venv, environ=env)
    assert got == Interpreter(user_venv, "--python")


def test_fixbugs_own_interpreter_only_when_named(tmp_path: Path):
    own = frozenset({OWN})
    me = Path(sys.executable)
    assert choose_interpreter(tmp_path, python=me, environ={}, own=own).path == me
    # the same interpreter reached through VIRTUAL_ENV and PATH is skipped
    env = {"VIRTUAL_ENV": str(OWN), "PATH": _path(OWN / "bin")}
    with pytest.raises(InputError, match="--python"):
        choose_interpreter(tmp_path, environ=env, own=own)


def test_active_virtualenv(user_venv: Path, tmp_path: Path):
    venv = user_venv.parent.parent
    env = {"VIRTUAL_ENV": str(venv), "PATH": _path(OWN / "bin", "/usr/bin")}
    got = choose_interpreter(tmp_path, environ=env, own=frozenset({OWN}))
    assert got.source == "VIRTUAL_ENV" and got.path.parent == user_venv.parent


def test_venv_inside_the_repository(tmp_path: Path, make_venv):
    repo = tmp_path / "repo"
    repo.mkdir()
    python = make_venv(repo / ".venv")
    env = {"PATH": _path(OWN / "bin", "/usr/bin")}
    got = choose_interpreter(repo, environ=env, own=frozenset({OWN}))
    assert got == Interpreter(python, "repository venv")


def test_python_on_path_skipping_fixbugs_own_env(user_venv: Path, tmp_path: Path):
    # FixBugs' own venv comes first on PATH, as when the user activated it to run fixbugs
    env = {"PATH": _path(OWN / "bin", user_venv.parent, "/usr/bin")}
    got = choose_interpreter(tmp_path, environ=env, own=frozenset({OWN}))
    assert got.source == "PATH" and got.path.parent == user_venv.parent


def test_no_interpreter_is_one_clear_error(tmp_path: Path):
    with pytest.raises(InputError, match="no Python interpreter found"):
        choose_interpreter(tmp_path, environ={"PATH": ""}, own=frozenset())
    with pytest.raises(InputError, match="not an executable"):
        choose_interpreter(tmp_path, python=tmp_path / "nope", environ={})


def test_probe_reports_the_users_python_and_pytest(user_venv: Path):
    env = probe_env(Interpreter(user_venv, "VIRTUAL_ENV"))
    assert env.minor == "3.10" and env.pytest == "7.4.4" and env.coverage is None
    assert env.is_venv and env.prefix == user_venv.parent.parent
    assert "Python 3.10" in env.describe() and "pytest 7.4.4" in env.describe()
    cmd = env.command_env(_path(OWN / "bin", "/usr/bin"))
    assert cmd["PATH"].split(os.pathsep)[0] == str(user_venv.parent)
    if own_prefixes():
        assert str(OWN / "bin") not in cmd["PATH"].split(os.pathsep)
    assert cmd["VIRTUAL_ENV"] == str(user_venv.parent.parent)
    assert user_venv.parent in env.readonly_paths()


def test_coverage_overlay_without_touching_the_users_env(user_venv: Path, wheels_env: Path):
    env, notes = prepare_env(probe_env(Interpreter(user_venv, "VIRTUAL_ENV")))
    assert env.overlay is not None and env.overlay.is_relative_to(wheels_env)
    # the newest wheel for Python 3.10 of the folder (7.5.4 built for 3.10, or a newer pure one)
    newest = best_wheel((3, 10), [Path(os.environ["FIXBUGS_WHEELS"])])
    assert newest is not None and env.overlay_coverage == str(newest.version)
    assert "private overlay" in notes[0] and "not installed for Python 3.10" in notes[0]
    check = [str(user_venv), "-c", "import coverage; print(coverage.__version__)"]
    with_overlay = subprocess.run(
        check, env={"PYTHONPATH": str(env.overlay)}, capture_output=True, text=True
    )
    assert with_overlay.stdout.strip() == env.overlay_coverage
    # the user's environment itself still has no coverage.py
    assert subprocess.run(check, capture_output=True, env={}).returncode != 0
    assert probe_env(Interpreter(user_venv, "VIRTUAL_ENV")).coverage is None
    # built once: a second call reuses it
    again, _ = prepare_env(probe_env(Interpreter(user_venv, "VIRTUAL_ENV")))
    assert again.overlay == env.overlay


def test_a_launcher_script_runs_the_interpreter_it_launches(user_venv: Path, tmp_path: Path):
    # a pyenv shim or a wrapper: the sandbox must run the real interpreter, not the script
    wrapper = tmp_path / "bin" / "python3"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{user_venv}" "$@"\n')
    wrapper.chmod(0o755)
    got = choose_interpreter(tmp_path, environ={"PATH": str(wrapper.parent)}, own=frozenset())
    assert got == Interpreter(wrapper, "PATH")
    env = probe_env(got)
    assert env.python == user_venv and env.source == "PATH"


def test_python_in_test_commands_means_the_chosen_interpreter(user_venv: Path, tmp_path: Path):
    from dataclasses import replace

    from fixbugs.pyenv.overlay import needs_shim, shim_dir

    lone = tmp_path / "bin" / "python3"  # a folder whose `python` is missing
    lone.parent.mkdir()
    lone.symlink_to(user_venv.resolve())
    assert needs_shim(lone) and not needs_shim(user_venv)
    shim = shim_dir(lone, cache_dir=tmp_path / "cache")
    env = replace(probe_env(Interpreter(user_venv, "--python")), shim=shim)
    path = env.command_env("/usr/bin:/bin")["PATH"].split(os.pathsep)
    assert path[0] == str(shim) and shim in env.readonly_paths()
    out = subprocess.run(
        ["python", "-c", "import sys; print(sys.version_info[:2])"],
        env={"PATH": os.pathsep.join(path)},
        capture_output=True,
        text=True,
    )
    assert out.stdout.strip() == "(3, 10)"
