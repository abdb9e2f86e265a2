"""A venv the repository ships never runs on the host, and never chooses what the sandbox shows.

Issue 21, item 2: ``userenv.probe_env`` ran a repository's ``.venv/bin/python``
on the host, as root, so a shell script there, or a ``.pth`` file in its
``site-packages``, ran as root; and the paths the probe printed decided which
host folders every test sandbox mounted. Each test builds the hostile venv
itself. The last test is the other half of the promise: a committed venv
still runs the tests, in the sandbox.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import distribution
from pathlib import Path

import pytest
from hostile import NEEDS_NAMESPACES, host_has, write_repo
from packaging.requirements import Requirement

from fixbugs.run.agent import interpreter_options, run_from_paths

BASE_PYTHON = Path(getattr(sys, "_base_executable", sys.executable))
SECRET = "HOSTSECRET-2f9c1e"
TEST = (
    "import os\nimport sys\n\nfrom calc.ops import add\n\n\n"
    "def test_add():\n"
    '    assert add(1, 2) == 3, f"PREFIX={sys.prefix} CWD={os.getcwd()}"\n'
)


@pytest.fixture(autouse=True)
def _users_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No active virtualenv (the repository's is the choice) and a private FixBugs cache."""
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _repo(root: Path) -> Path:
    return write_repo(
        root,
        {
            "calc/__init__.py": "",
            "calc/ops.py": "def add(a, b):\n    return a - b\n",
            "tests/test_ops.py": TEST,
            "report.md": "# test_add fails\n\n`add(1, 2)` returns -1 instead of 3.\n",
        },
    )


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def _real_venv(where: Path) -> Path:
    """A venv at ``where`` whose ``bin/python`` links to this Python's base; its site-packages."""
    subprocess.run(
        [str(BASE_PYTHON), "-m", "venv", "--without-pip", str(where)], check=True, timeout=120
    )
    minor = "python{}.{}".format(*sys.version_info[:2])
    return where / "lib" / minor / "site-packages"


def _copy_pytest(site: Path) -> str:
    """pytest and what it requires, copied from this environment into ``site``; its version."""
    seen: set[str] = set()
    todo = ["pytest"]
    while todo:
        dist = distribution(todo.pop())
        name = dist.metadata["Name"].lower()
        if name in seen:
            continue
        seen.add(name)
        for file in dist.files or ():
            src = Path(str(dist.locate_file(file)))
            dest = site / file
            if src.is_file() and dest.resolve().is_relative_to(site.resolve()):
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
        for text in dist.requires or ():
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return distribution("pytest").version


def _secret_folder(tmp_path: Path) -> Path:
    """A host folder no sandbox may show, holding :data:`SECRET`."""
    folder = tmp_path / "hostsecret"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET + "\n")
    return folder


def _no_secret(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text, text


@NEEDS_NAMESPACES
def test_a_script_python_never_runs_on_the_host(tmp_path: Path):
    marker = tmp_path / "MARKER"
    repo = _repo(tmp_path / "proj")
    _script(
        repo / ".venv" / "bin" / "python",
        f"#!/bin/sh\ntouch {marker}\nprintf '\\033]52;c;SGk=\\007\\033[1Anot json\\n' >&2\n",
    )
    # a plausible pyvenv.cfg, so that the script is run (in the sandbox) to probe it
    (repo / ".venv" / "pyvenv.cfg").write_text(f"home = {BASE_PYTHON.parent}\n")
    out = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    cli = [sys.executable, "-c", "from fixbugs.cli import main; main()", "run", "--no-model"]
    done = subprocess.run(
        [
            *cli,
            *("--report", str(repo / "report.md"), "--repo", str(repo), "--json", str(out)),
            *("--test", "python -m pytest tests/test_ops.py::test_add"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert not host_has(marker)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    data = json.loads(out.read_text())
    assert "\x1b" not in done.stdout + done.stderr + "".join(data["notes"])
    said = [n for n in data["notes"] if "could not be probed" in n]
    assert len(said) == 1 and "\n" not in said[0] and "(repository venv)" in said[0]
    assert data["reproduction"]["status"] == "could_not_run"
    assert "could not be probed" in data["reproduction"]["summary"]


@NEEDS_NAMESPACES
def test_pth_code_of_a_real_venv_never_runs_on_the_host(tmp_path: Path):
    marker = tmp_path / "MARKER"
    repo = _repo(tmp_path / "proj")
    site = _real_venv(repo / ".venv")
    (site / "evil.pth").write_text(f"import os; open({str(marker)!r}, 'w').write('ran')\n")
    notes: list[str] = []
    opts = interpreter_options(repo, None, notes)
    assert not host_has(marker)
    # the probe ran (in the sandbox, where the marker's folder does not exist)
    assert opts.python is not None and opts.python.source == "repository venv"
    assert opts.python.python == repo / ".venv" / "bin" / "python"
    assert opts.python.version == "{}.{}.{}".format(*sys.version_info[:3])


@NEEDS_NAMESPACES
async def test_the_probe_cannot_choose_what_the_sandbox_mounts(tmp_path: Path):
    secret = _secret_folder(tmp_path)
    repo = _repo(tmp_path / "proj")
    python = repo / ".venv" / "bin" / "python"
    answer = json.dumps(
        {
            "version": "3.11.7",
            "executable": str(python),
            "prefix": str(secret),
            "base_prefix": str(secret),
            "pytest": "8.3.0",
            "coverage": None,
        }
    )
    # the probe gets the hostile answer; the tests' `python -m pytest` reads the secret
    _script(
        python,
        f"#!/bin/sh\nif [ \"$1\" = -c ]; then echo '{answer}'; exit 0; fi\n"
        f"cat {secret}/secret.txt; ls /root {secret}; exit 1\n",
    )
    (repo / ".venv" / "pyvenv.cfg").write_text(f"home = {BASE_PYTHON.parent}\n")
    opts = interpreter_options(repo, None, [])
    assert opts.python is not None
    mounted = opts.python.readonly_paths()
    assert not any(p == secret or secret.is_relative_to(p) for p in mounted), mounted
    assert not any(Path("/root").is_relative_to(p) for p in mounted), mounted
    report = await run_from_paths(
        report=repo / "report.md",
        repo=repo,
        test="python -m pytest tests/test_ops.py::test_add",
        use_model=False,
    )
    data = json.dumps(report.to_dict())
    assert "secret.txt" in data  # the test did try to read it, and failed
    _no_secret(data, report.markdown())
    assert any("does not take from it" in n and "prefix" in n for n in report.to_dict()["notes"])


def test_a_venv_linked_out_of_the_repository_is_not_used(tmp_path: Path):
    outside = tmp_path / "hostvenv"
    _real_venv(outside)
    (outside / "secret.txt").write_text(SECRET)
    repo = _repo(tmp_path / "proj")
    (repo / ".venv").symlink_to(outside)
    notes: list[str] = []
    opts = interpreter_options(repo, None, notes)
    assert opts.python is None and opts.no_python
    assert len(notes) == 1 and "is a link" in notes[0]


def test_bin_python_linked_to_a_host_program_never_runs(tmp_path: Path):
    marker = tmp_path / "MARKER"
    host = _script(tmp_path / "tools" / "bin" / "python3", f"#!/bin/sh\ntouch {marker}\n")
    repo = _repo(tmp_path / "proj")
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "bin" / "python").symlink_to(host)
    notes: list[str] = []
    opts = interpreter_options(repo, None, notes)
    assert not host_has(marker)
    assert opts.python is None and "not a Python installation" in notes[0]


@pytest.mark.parametrize("home", ["/root", "SECRET", "SECRET/bin", None])
def test_pyvenv_cfg_never_names_a_folder_to_mount(tmp_path: Path, home: str | None):
    marker = tmp_path / "MARKER"
    secret = _secret_folder(tmp_path)
    _script(secret / "bin" / "python3", f"#!/bin/sh\ntouch {marker}\n")  # no installation
    repo = _repo(tmp_path / "proj")
    _script(
        repo / ".venv" / "bin" / "python", f"#!/bin/sh\ntouch {marker}\ncat {secret}/secret.txt\n"
    )
    if home is not None:
        cfg = f"home = {home.replace('SECRET', str(secret))}\n"
        (repo / ".venv" / "pyvenv.cfg").write_text(cfg)
    notes: list[str] = []
    opts = interpreter_options(repo, None, notes)
    assert not host_has(marker)
    _no_secret(*notes)
    assert opts.python is None and len(notes) == 1 and "is not used" in notes[0], notes
    assert "names none outside the repository" in notes[0]


@NEEDS_NAMESPACES
@pytest.mark.parametrize("given", ["absolute", "relative"])
async def test_a_committed_venv_still_runs_the_tests_in_the_sandbox(
    tmp_path: Path, given: str, monkeypatch: pytest.MonkeyPatch
):
    repo = _repo(tmp_path / "proj")
    venv = repo / ".venv"
    version = _copy_pytest(_real_venv(venv))
    monkeypatch.chdir(repo)  # as a user runs `fixbugs run --repo .` in the project
    report = await run_from_paths(
        report=repo / "report.md",
        repo=repo if given == "absolute" else Path("."),
        test="python -m pytest tests/test_ops.py::test_add",
        use_model=False,
        repair_candidates=1,  # the environment and the reproduction are checked, not repair
    )
    d = report.to_dict()
    env = d["environment"]
    assert env["python"] == str(venv / "bin" / "python") and env["source"] == "repository venv"
    assert env["pytest"] == version and env["prefix"] == str(venv)
    rep = d["reproduction"]
    assert rep["status"] == "confirmed" and rep["confirmed"], rep
    # the failing assertion prints the interpreter's prefix and the working folder:
    # the repository's venv ran the test, in a sandbox's copy, not in the repository
    found = re.search(r"AssertionError: PREFIX=(\S+) CWD=(\S+)", rep["output_tail"])
    assert found is not None, rep["output_tail"]
    assert found.group(1) == str(venv)
    assert Path(found.group(2)) != repo and not Path(found.group(2)).is_relative_to(repo)
    assert Path(found.group(2)).name == "repo" and "fixbugs-sandbox-" in found.group(2)
    assert "repository venv" in report.markdown()
