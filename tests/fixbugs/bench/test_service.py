"""The service benchmark: its figures from three runs (pure arithmetic), its seeded copies."""

from __future__ import annotations

from pathlib import Path

from fixbugs.bench.service import BugTimes, ModeRun, _bug, bug_test_env, summarize


def _run(mode: str, wall: float, finished: list[float], big: float | None = None) -> ModeRun:
    bugs = [BugTimes(f"s{i}", False, 0.0, 1.0 + i, f) for i, f in enumerate(finished)]
    if big is not None:
        bugs.append(BugTimes("big", True, 0.0, 5.0, big))
    return ModeRun(mode, wall, tuple(bugs))


def test_per_hour_speedup_and_small_p95s() -> None:
    staged = _run("staged", 60.0, [10.0, 20.0, 30.0], big=60.0)  # 4 bugs in a minute
    whole = _run("whole-bug", 120.0, [40.0, 80.0, 100.0], big=50.0)  # 4 in two
    alone = _run("staged-alone", 30.0, [10.0, 20.0, 24.0])
    f = summarize(2, 3, staged, whole, alone)
    assert f.staged_per_hour == 240.0 and f.whole_bug_per_hour == 120.0
    assert f.speedup == 2.0
    # the large bug is not a small one: p95 of 10, 20, 30 (linear) is 29
    assert f.small_p95_with_big_s == 29.0
    assert f.small_p95_alone_s == 23.6
    assert f.small_ratio == round(29.0 / 23.6, 2)
    assert f.whole_bug_small_p95_with_big_s == 98.0


def test_unfinished_bugs_do_not_count() -> None:
    staged = ModeRun("staged", 3600.0, (BugTimes("a", False, 0.0, None, None),))
    f = summarize(1, 1, staged, staged, staged)
    assert f.staged_per_hour == 0.0 and f.speedup == 0.0
    assert f.small_p95_alone_s is None and f.small_ratio is None


def test_each_seeded_copy_of_the_example_reports_different_details(tmp_path: Path) -> None:
    texts = set()
    for seed in (1, 2):
        _bug(tmp_path / f"s{seed}", big=False, slow_tests=0, modules=0, seed=seed)
        texts.add((tmp_path / f"s{seed}" / "report.md").read_text())
    assert len(texts) == 2
    assert not any("ticket #4412" in t for t in texts)


def test_the_bugs_tests_autoload_no_pytest_plugin_unless_asked() -> None:
    base = {"PATH": "/venv/bin:/usr/bin"}
    off = bug_test_env(base, pytest_plugins=False)
    assert off == {**base, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    assert bug_test_env(base, pytest_plugins=True) == base
    assert base == {"PATH": "/venv/bin:/usr/bin"}  # the caller's mapping is not changed
