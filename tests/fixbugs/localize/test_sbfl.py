import math
from pathlib import Path

import pytest

from fixbugs.localize import Spectrum, ochiai, run_sbfl, sbfl_evidence
from fixbugs.localize.sbfl import context_key, node_key, spectrum_from_coverage, suspicious_ranges
from fixbugs.sandbox import CommandResult


def test_ochiai_scores_lines_run_by_failing_tests_and_few_passing_ones():
    spec = Spectrum(
        coverage={
            "a.py": {1: frozenset({"f", "p1", "p2"}), 2: frozenset({"f"}), 3: frozenset({"p1"})},
            "b.py": {1: frozenset({"f", "p1"})},
        },
        failed=frozenset({"f"}),
        passed=frozenset({"p1", "p2"}),
    )
    res = ochiai(spec)
    assert res.line_scores["a.py"] == {1: 1 / math.sqrt(3), 2: 1.0}  # line 3: no failing test
    assert res.file_scores == {"a.py": 1.0, "b.py": 1 / math.sqrt(2)}
    assert res.ranges("a.py") == ((2, 2),)


def test_no_failing_test_means_no_scores():
    res = ochiai(Spectrum({"a.py": {1: frozenset({"p"})}}, frozenset(), frozenset({"p"})))
    assert res.file_scores == {} and res.notes


def test_suspicious_ranges_join_nearby_top_lines():
    scores = {1: 1.0, 2: 1.0, 5: 1.0, 20: 1.0, 21: 0.3}
    assert suspicious_ranges(scores) == ((1, 5), (20, 20))


def test_keys_match_contexts_for_classes_and_parameters():
    assert (
        node_key("tests/shells/test_fish.py::TestFish::test_get[x-y]")
        == "test_fish.TestFish.test_get"
    )
    keys = ["test_fish.TestFish.test_get", "test_fish.test_get"]
    assert context_key("tests.shells.test_fish.TestFish.test_get", keys) == keys[0]
    assert context_key("tests.shells.test_fish.test_get", keys) == keys[1]
    assert context_key("tests.other.test_get", keys) is None


def test_spectrum_from_the_contexts_report_and_outcomes():
    # each context is named once; a line lists its contexts' indices
    report = {
        "contexts": ["tests.test_a.test_bad", "tests.test_a.test_ok", ""],
        "files": {
            "pkg/a.py": {"1": [2], "2": [0], "3": [0, 1], "4": [7]},
            "tests/test_a.py": {"5": [1]},
        },
    }
    outcomes = {
        "tests/test_a.py::test_bad[1]": "passed",
        "tests/test_a.py::test_bad[2]": "failed",
        "tests/test_a.py::test_ok": "passed",
    }
    spec = spectrum_from_coverage(report, outcomes)
    assert spec.failed == {"test_a.test_bad"} and spec.passed == {"test_a.test_ok"}
    assert spec.coverage["pkg/a.py"] == {
        2: {"test_a.test_bad"},
        3: {"test_a.test_bad", "test_a.test_ok"},
    }
    ev = sbfl_evidence(ochiai(spec))
    assert [e.path for e in ev] == ["pkg/a.py"]  # test files are never suspects
    assert ev[0].lines == ((2, 2),)


class Replay:
    """An executor that runs nothing and answers every command with one canned result."""

    def __init__(self, root: Path, returncode: int, output: str, *, timed_out: bool = False):
        self.root = root
        self.answer = (returncode, output, timed_out)
        self.calls: list[tuple[str, ...]] = []

    async def run(self, cmd, *, timeout_s, env=None) -> CommandResult:
        self.calls.append(tuple(cmd))
        rc, out, timed_out = self.answer
        return CommandResult(tuple(cmd), rc, out, "", timed_out, None, 0.0, False)


async def test_driver_reports_a_timeout_as_a_note_not_a_crash(tmp_path: Path):
    executor = Replay(tmp_path, -9, "", timed_out=True)
    res = await run_sbfl(executor, Path("/bin/python"), ["tests/test_a.py"])
    calls = executor.calls
    assert res.file_scores == {} and "ran past" in res.notes[0]
    assert calls[0][1:4] == ("-m", "coverage", "run")


async def test_driver_without_test_files_skips():
    res = await run_sbfl(Replay(Path("."), 0, ""), Path("/bin/python"), [])
    assert res.notes == ("no test files to run; SBFL skipped",)


@pytest.mark.parametrize("output", ["", "ImportError: no module named coverage"])
async def test_driver_without_outcomes_says_why(tmp_path: Path, output: str):
    res = await run_sbfl(Replay(tmp_path, 1, output), Path("/bin/python"), ["tests/test_a.py"])
    assert res.file_scores == {} and "no test outcomes" in res.notes[0]
