"""The whole run on small repositories, with the user's own virtualenv (Python 3.10, pytest 7.4.4).

The test module prints ``sys.version`` into its assertion, so the captured
output itself proves which interpreter ran it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from userpython import WHEELS

from fixbugs.run.agent import run_from_paths

pytestmark = pytest.mark.needs_root


REPORT = "# test_add fails\n\n`add(1, 2)` returns -1 instead of 3.\n"
SOURCE = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
TEST = (
    "import sys\n\nfrom calc.ops import add, mul\n\n\n"
    "def test_add():\n    assert add(1, 2) == 3, sys.version\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)


def _repo(root: Path, test: str = TEST) -> Path:
    (root / "calc").mkdir(parents=True)
    (root / "calc" / "__init__.py").write_text("")
    (root / "calc" / "ops.py").write_text(SOURCE)
    (root / "tests").mkdir()
    (root / "tests" / "test_ops.py").write_text(test)
    (root / "report.md").write_text(REPORT)
    return root


async def _run(repo: Path, test: str | None, python: Path | None = None):
    return await run_from_paths(
        report=repo / "report.md", repo=repo, test=test, use_model=False, python=python
    )


async def test_active_venv_runs_the_tests_and_sbfl(user_venv, wheels_env, tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTUAL_ENV", str(user_venv.parent.parent))
    repo = _repo(tmp_path / "proj")
    report = await _run(repo, "python -m pytest tests/test_ops.py::test_add")
    d = report.to_dict()
    env = d["environment"]
    assert env["python"] == str(user_venv) and env["source"] == "VIRTUAL_ENV"
    assert env["version"].startswith("3.10.") and env["pytest"] == "7.4.4"
    assert env["coverage"] is None and env["coverage_overlay"]  # supplied privately
    assert d["reproduction"]["status"] == "confirmed" and d["reproduction"]["confirmed"]
    md = report.markdown()
    assert "Python 3.10" in md and "pytest 7.4.4" in md
    # SBFL ran under the user's interpreter with the overlay's coverage.py
    top = d["ranked_files"][0]
    assert top["path"] == "calc/ops.py"
    assert any("Ochiai" in r for f in d["ranked_files"] for r in f["reasons"])


async def test_module_that_fails_to_import_is_could_not_run(user_venv, wheels_env, tmp_path):
    broken = TEST.replace("from calc.ops import add, mul", "from calc.missing import add, mul")
    repo = _repo(tmp_path / "proj", broken)
    report = await _run(repo, "python -m pytest tests/test_ops.py::test_add", python=user_venv)
    rep = report.to_dict()["reproduction"]
    assert rep["status"] == "could_not_run" and rep["confirmed"] is False
    assert rep["summary"].startswith("could not run:") and "fails to import" in rep["summary"]
    assert "calc.missing" in rep["output_tail"]
    md = report.markdown()
    assert "The bug was not reproduced." in md and "Could not run" in md
    assert not any("Ochiai" in r for f in report.to_dict()["ranked_files"] for r in f["reasons"])
    assert report.to_dict()["validated"] is False


async def test_collection_error_and_missing_test_are_never_confirmed(
    user_venv, wheels_env, tmp_path
):
    repo = _repo(tmp_path / "proj", TEST + "\ndef broken(:\n")
    report = await _run(repo, "python -m pytest tests/test_ops.py::test_add", python=user_venv)
    assert report.to_dict()["reproduction"]["status"] == "could_not_run"
    repo2 = _repo(tmp_path / "proj2")
    report = await _run(repo2, "python -m pytest tests/test_ops.py::test_nope", python=user_venv)
    rep = report.to_dict()["reproduction"]
    assert rep["status"] == "could_not_run" and "usage error" in rep["summary"]


async def test_env_without_pytest_says_so_in_one_line(tmp_path, make_venv, monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    repo = _repo(tmp_path / "proj")
    bare = make_venv(repo / ".venv")  # the repository's own venv, without pytest
    report = await _run(repo, "python -m pytest tests/test_ops.py::test_add")
    d = report.to_dict()
    assert d["environment"]["python"] == str(bare) and d["environment"]["pytest"] is None
    assert d["reproduction"]["status"] == "could_not_run"
    assert "pytest is not installed" in d["reproduction"]["summary"]
    assert sum("pytest is not installed" in n for n in d["notes"]) == 1


def _sbfl_ran(d: dict[str, object]) -> bool:
    files = d["ranked_files"]
    assert isinstance(files, list)
    return any("Ochiai" in r for f in files for r in f["reasons"])


# Python 3.6's pip (18.1) takes the newest wheel it finds and then fails on its
# Requires-Python: its pytest's dependencies are pinned to what supports 3.6.
_PY36_PYTEST = (
    "pytest==7.0.1",
    "attrs==22.2.0",
    "iniconfig==1.1.1",
    "packaging==21.3",
    "pyparsing==3.0.7",
    "pluggy==1.0.0",
    "py==1.11.0",
    "tomli==1.2.3",
    "importlib-metadata==4.8.3",
    "zipp==3.6.0",
    "typing-extensions==4.1.1",
)


@pytest.mark.parametrize(("python", "packages"), [("3.6", _PY36_PYTEST), ("3.13", ("pytest",))])
async def test_sbfl_under_the_oldest_and_newest_python_without_coverage(
    python, packages, make_venv, wheels_env, tmp_path, monkeypatch
):
    from fixbugs.pyenv.coveragewheels import release_for

    if not list(WHEELS.glob(".ready-coverage-*")):
        pytest.skip("needs the coverage wheels scripts/test-wheels fetches into .cache/wheels")
    venv = make_venv(tmp_path / "venv", *packages, python=python)
    monkeypatch.setenv("VIRTUAL_ENV", str(venv.parent.parent))
    repo = _repo(tmp_path / "proj")
    report = await _run(repo, "python -m pytest tests/test_ops.py::test_add")
    d = report.to_dict()
    env = d["environment"]
    assert env["version"].startswith(python + ".") and env["coverage"] is None
    release = release_for((3, int(python.split(".")[1])))
    assert release is not None and env["overlay_coverage"] == release.version
    assert d["reproduction"]["status"] == "confirmed"
    assert _sbfl_ran(d) and d["ranked_files"][0]["path"] == "calc/ops.py"


@pytest.mark.parametrize(
    ("python", "coverage", "pytest_cov"), [("3.10", "7.5.4", "4.1.0"), ("3.8", "5.5", "2.12.1")]
)
async def test_a_project_configuring_pytest_cov_still_gets_sbfl(
    python, coverage, pytest_cov, make_venv, tmp_path, monkeypatch
):
    # the project's own coverage settings point elsewhere and its addopts start pytest-cov:
    # FixBugs' run reads neither, and the project's options still parse; the venv's own
    # coverage.py runs it (5.5 has no -q, no --data-file)
    venv = make_venv(
        tmp_path / "venv",
        "pytest==7.4.4",
        f"pytest-cov=={pytest_cov}",
        f"coverage=={coverage}",
        python=python,
    )
    monkeypatch.setenv("VIRTUAL_ENV", str(venv.parent.parent))
    repo = _repo(tmp_path / "proj")
    (repo / "setup.cfg").write_text(
        "[tool:pytest]\naddopts = --cov --cov-report=term --cov-config=setup.cfg\n\n"
        "[coverage:run]\nsource = elsewhere\ndata_file = .coverage.project\n"
    )
    report = await _run(repo, "python -m pytest tests/test_ops.py::test_add")
    d = report.to_dict()
    assert d["environment"]["coverage"] == coverage and not d["environment"]["coverage_overlay"]
    assert d["reproduction"]["status"] == "confirmed"
    assert _sbfl_ran(d) and d["ranked_files"][0]["path"] == "calc/ops.py", d["notes"]


async def test_without_coverage_anywhere_the_verdict_says_the_root_cause_is_static(
    user_venv, tmp_path, monkeypatch
):
    monkeypatch.delenv("FIXBUGS_WHEELS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))  # no wheel, no overlay
    repo = _repo(tmp_path / "proj")
    report = await _run(repo, "python -m pytest tests/test_ops.py::test_add", python=user_venv)
    d = report.to_dict()
    assert d["reproduction"]["status"] == "confirmed" and not _sbfl_ran(d)
    why = d["reproduction"]["sbfl_skipped"]
    assert why.startswith("coverage.py is not available for the tests' Python 3.10 (")
    assert sum("SBFL will not run: coverage.py is not installed" in n for n in d["notes"]) == 1
    assert d["root_cause"]["origin"] == "static"
    verdict = report.markdown().split("## Verdict", 1)[1].split("## ", 1)[0]
    assert "SBFL did not run (coverage.py is not available for the tests' Python 3.10" in verdict
    assert "the root cause stands on static evidence" in verdict
