"""``fixbugs bench scale``: its points' shape, a real tiny point, and its one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fixbugs.bench.index_scale import PointRun, plot_points, run_scale, scale_json
from fixbugs.index.synthetic import write_synthetic_repo

KEYS = {"files", "first_hypothesis_cold_s", "first_hypothesis_warm_s", "analysis_s", "peak_rss_mb"}


def test_points_have_the_issues_fields(tmp_path: Path) -> None:
    calls: list[tuple[Path, bool]] = []

    def measure(repo: Path, report: Path, index_dir: Path) -> PointRun:
        warm = index_dir.exists()
        calls.append((repo, warm))
        index_dir.mkdir(exist_ok=True)
        n = sum(1 for p in repo.rglob("*") if p.is_file())
        return PointRun(
            first_hypothesis_s=0.5 if warm else 2.0 + n / 1000,
            analysis_s=0.4 if warm else 1.5,
            peak_rss_mb=100.0 + n / 100,
            top_file="pkg0000/mod01.py",
            index_files=n,
            tree_cached=True,
        )

    points = run_scale([20, 200], tmp_path / "work", measure=measure)
    assert [warm for _, warm in calls] == [False, True, False, True]  # cold, then warm
    data = json.loads(json.dumps(scale_json(points)))
    assert [p["files"] for p in data["points"]] == [20, 200]
    for p in data["points"]:
        assert set(p) >= KEYS
    first = data["points"][0]
    assert first["first_hypothesis_cold_s"] == 2.02 and first["first_hypothesis_warm_s"] == 0.5
    assert first["analysis_s"] == 1.5 and first["peak_rss_mb"] == 100.2
    assert not (tmp_path / "work" / "synthetic-20").exists()  # each tree goes after its point
    said = plot_points(points, tmp_path / "curve.png")
    assert said.startswith("plot written") and (tmp_path / "curve.png").stat().st_size > 0


def test_synthetic_trees_are_deterministic_and_of_their_size(tmp_path: Path) -> None:
    a = write_synthetic_repo(tmp_path / "a", 120)
    b = write_synthetic_repo(tmp_path / "b", 120)
    assert a.files == 120
    texts_a = {p.relative_to(a.root): p.read_text() for p in a.root.rglob("*.py")}
    texts_b = {p.relative_to(b.root): p.read_text() for p in b.root.rglob("*.py")}
    assert texts_a == texts_b
    assert a.bug_symbol in (a.root / a.bug_path).read_text()


def test_a_real_point_runs_cold_then_warm_from_the_cache(tmp_path: Path) -> None:
    (point,) = run_scale([30], tmp_path)
    assert point.files == 30
    assert point.first_hypothesis_cold_s is not None and point.first_hypothesis_warm_s is not None
    assert point.warm_from_cache
    assert point.top_file == point.expected_file  # the synthetic report points at its bug
    assert point.peak_rss_mb > 0


def test_bad_sizes_are_one_line() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from fixbugs.cli import main; main()",
            "bench",
            "scale",
            "--sizes",
            "ten",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "--sizes" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_real_tree_is_a_point_of_its_own(tmp_path: Path) -> None:
    tree = write_synthetic_repo(tmp_path / "given", 40)

    def measure(repo: Path, report: Path, index_dir: Path) -> PointRun:
        assert repo == tree.root and report == tree.report
        return PointRun(
            first_hypothesis_s=1.0,
            analysis_s=1.0,
            peak_rss_mb=50.0,
            top_file=None,
            index_files=40,
            tree_cached=True,
        )

    (point,) = run_scale(
        [], tmp_path / "work", measure=measure, real=(tree.root, tree.report), real_label="case-1"
    )
    assert point.label == "real:case-1" and point.expected_file is None
    assert point.files == tree.files == 40  # the text files the walk lists
    assert tree.root.exists()  # a real tree is the user's: never deleted
    assert plot_points([point], tmp_path / "real.svg").startswith("plot written")
