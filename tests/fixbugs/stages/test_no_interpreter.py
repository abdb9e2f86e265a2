"""No interpreter found for the user's tests: the run goes on, its reproduction "could not run"."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrt import FakeClock
from fixbugs.errors import InputError
from fixbugs.inputs import load_inputs
from fixbugs.run.agent import interpreter_options
from fixbugs.run.context import RunContext
from fixbugs.run.progress import Journal
from fixbugs.run.record import Analysis
from fixbugs.stages.reproduce import reproduce


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    (repo / "tests").mkdir(parents=True)
    (repo / "m.py").write_text("def f():\n    return 1\n")
    (repo / "tests" / "test_m.py").write_text(
        "from m import f\n\n\ndef test_f():\n    assert f() == 2\n"
    )
    (repo / "report.md").write_text("# f returns 1\n")
    return repo


class _NoWorkspace:
    """A workspace that fails any use: the reproduction must not reach one."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the workspace was used ({name})")


def test_nothing_found_is_a_note_not_an_exit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    notes: list[str] = []
    opts = interpreter_options(_repo(tmp_path), None, notes)
    assert opts.python is None and opts.no_python and "no Python interpreter found" in notes[0]
    # a named interpreter that does not exist stays a user error (exit 2)
    with pytest.raises(InputError):
        interpreter_options(_repo(tmp_path / "b"), tmp_path / "nope", [])


async def test_reproduction_says_could_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    repo = _repo(tmp_path)
    opts = interpreter_options(repo, None, [])
    inputs = load_inputs(repo / "report.md", repo, test="python -m pytest tests/test_m.py::test_f")
    ctx = RunContext.create(
        inputs.repo, models=None, options=opts, journal=Journal(FakeClock(), lambda _: None)
    )
    # never reaches the workspace: nothing could run the tests
    rep = await reproduce(inputs, Analysis(), ctx, _NoWorkspace())
    assert rep.status == "could_not_run" and not rep.confirmed
    assert rep.summary.startswith("could not run: no Python interpreter found")
    assert "not reproduced" in rep.summary
