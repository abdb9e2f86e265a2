"""``fixbugs bench scale``: time to the first hypothesis against the repository's size.

For each size a synthetic tree (:mod:`fixbugs.index.synthetic`) is
written, plus an optional real one (``--real``: a work tree, or a bug case
folder with ``repo.tar.gz`` and ``report.md``). Each tree is run twice,
each time in a fresh process (``python -m fixbugs.bench.index_scale``) so its
peak RSS is its own: cold, with an empty index folder of its own, then
warm, with the index the cold run saved. A run is the agent up to the
analysis (no model): the first hypothesis's time is its event's, on the
run's clock; the analysis wall time is the stage's. The figures say what
the machine's load was when they were taken: on a shared machine they
read as measured there.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel, ConfigDict, ValidationError

from fixbugs.errors import InputError

__all__ = ["PointRun", "ScalePoint", "measure_in_process", "run_scale", "scale_command"]

DEFAULT_SIZES = (100, 1000, 2000, 5000, 20000)
_POINT_TIMEOUT_S = 1800.0


class PointRun(BaseModel):
    """One measured run (what a point's process prints, validated as it comes back)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    first_hypothesis_s: float | None
    analysis_s: float
    peak_rss_mb: float
    top_file: str | None
    index_files: int
    tree_cached: bool  # after the run, the index cache held this tree whole


@dataclass(frozen=True, slots=True)
class ScalePoint:
    """One tree's figures: cold and warm runs (``analysis_s`` is the cold run's)."""

    label: str
    files: int
    first_hypothesis_cold_s: float | None
    first_hypothesis_warm_s: float | None
    analysis_s: float
    analysis_warm_s: float
    peak_rss_mb: float  # the larger of the two runs'
    peak_rss_cold_mb: float
    peak_rss_warm_mb: float
    warm_from_cache: bool  # the cold run left the whole tree's index for the warm one
    top_file: str | None
    expected_file: str | None  # the file of the synthetic bug (None for a real tree)
    load_avg: tuple[float, float, float]  # the machine's load before the point


Measure = Callable[[Path, Path, Path], PointRun]  # (repo, report, index folder) -> one run


async def _analysis_run(repo: Path, report: Path) -> PointRun:
    from fixbugs.index import IndexCache, index_repository
    from fixbugs.inputs import load_inputs
    from fixbugs.run.agent import run_bug
    from fixbugs.run.context import AgentOptions

    inputs = await asyncio.to_thread(load_inputs, report, repo)
    try:
        rep = await run_bug(
            inputs, models=None, options=AgentOptions(use_model=False), until="analysis"
        )
        rss = max(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        )  # KiB on Linux
        # not timed: was the tree in the cache once the run ended?
        cached = index_repository(inputs.repo, cache=IndexCache.default(), workers=1).cache_hit
    finally:
        inputs.repo.close()
    model = rep.model
    return PointRun(
        first_hypothesis_s=model.first_hypothesis_s,
        analysis_s=model.stages["analysis"].wall_s,
        peak_rss_mb=round(rss / 1024, 1),
        top_file=model.ranked_files[0].path if model.ranked_files else None,
        index_files=len(inputs.repo.files()),
        tree_cached=cached,
    )


def measure_in_process(repo: Path, report: Path, index_dir: Path) -> PointRun:
    """One run here (this process's RSS counts everything it ran before)."""
    os.environ["FIXBUGS_INDEX_DIR"] = str(index_dir)
    return asyncio.run(_analysis_run(repo, report))


def measure_in_child(repo: Path, report: Path, index_dir: Path) -> PointRun:
    """One run in a fresh interpreter: its own peak RSS, its own imports."""
    from fixbugs.index.childenv import run_own_module

    done = run_own_module(
        "fixbugs.bench.index_scale",
        [os.path.abspath(repo), os.path.abspath(report)],  # the child runs from /
        extra_env={"FIXBUGS_INDEX_DIR": os.path.abspath(index_dir)},
        timeout_s=_POINT_TIMEOUT_S,
    )
    last = done.stdout.decode("utf-8", "replace").strip().splitlines()[-1:]
    try:
        if not done.ok or not last:
            raise ValueError(done.said()[-300:])
        return PointRun.model_validate_json(last[0])
    except (ValueError, ValidationError) as e:
        raise InputError(f"a scale bench run on {repo} failed: {e}") from None


def _point(
    label: str,
    repo: Path,
    report: Path,
    files: int,
    expected: str | None,
    measure: Measure,
    work: Path,
) -> ScalePoint:
    index_dir = work / f"index-{label}"
    shutil.rmtree(index_dir, ignore_errors=True)
    load = os.getloadavg()
    cold = measure(repo, report, index_dir)
    warm = measure(repo, report, index_dir)
    return ScalePoint(
        label=label,
        files=files,
        first_hypothesis_cold_s=cold.first_hypothesis_s,
        first_hypothesis_warm_s=warm.first_hypothesis_s,
        analysis_s=cold.analysis_s,
        analysis_warm_s=warm.analysis_s,
        peak_rss_mb=max(cold.peak_rss_mb, warm.peak_rss_mb),
        peak_rss_cold_mb=cold.peak_rss_mb,
        peak_rss_warm_mb=warm.peak_rss_mb,
        warm_from_cache=cold.tree_cached,  # what the cold run left is what the warm one read
        top_file=warm.top_file,
        expected_file=expected,
        load_avg=(round(load[0], 2), round(load[1], 2), round(load[2], 2)),
    )


def _real_tree(path: Path, report: Path | None, work: Path) -> tuple[Path, Path]:
    """(repo, report) of ``--real``: a work tree (with ``--real-report``) or a case folder."""
    if (path / "repo.tar.gz").is_file():
        dest = work / "real"
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(path / "repo.tar.gz") as tf:
            tf.extractall(dest, filter="data")
        inner = [p for p in dest.iterdir() if p.is_dir()]
        root = inner[0] if len(inner) == 1 and not (dest / ".git").exists() else dest
        return root, report or path / "report.md"
    if report is None:
        raise InputError(f"--real {path} is a work tree: give its report with --real-report")
    return path, report


def run_scale(
    sizes: Sequence[int],
    work: Path,
    *,
    measure: Measure = measure_in_child,
    real: tuple[Path, Path] | None = None,
    real_label: str | None = None,
    on_point: Callable[[ScalePoint], None] | None = None,
) -> list[ScalePoint]:
    """Measure every size (and the real tree, last) in ``work``; each tree is deleted after."""
    from fixbugs.index.synthetic import write_synthetic_repo

    points: list[ScalePoint] = []
    for n in sizes:
        where = work / f"synthetic-{n}"
        tree = write_synthetic_repo(where, n)
        try:
            point = _point(str(n), tree.root, tree.report, tree.files, tree.bug_path, measure, work)
        finally:
            shutil.rmtree(where, ignore_errors=True)
        points.append(point)
        if on_point is not None:
            on_point(point)
    if real is not None:
        repo, report = real
        from fixbugs.inputs import open_repo

        opened = open_repo(repo)
        try:
            count = len(opened.files())
        finally:
            opened.close()
        label = f"real:{real_label or repo.name}"
        point = _point(label, repo, report, count, None, measure, work)
        points.append(point)
        if on_point is not None:
            on_point(point)
    return points


def scale_json(points: Sequence[ScalePoint]) -> dict[str, object]:
    """The figures as ``--json`` writes them: ``points``, one object per tree."""
    return {"points": [asdict(p) for p in points]}


def plot_points(points: Sequence[ScalePoint], out: Path) -> str:
    """Draw the curve (files against seconds) to ``out``; what was written, or why not."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"no plot: matplotlib is not installed ({out} not written)"
    synthetic = sorted((p for p in points if p.expected_file is not None), key=lambda p: p.files)
    real = [p for p in points if p.expected_file is None]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = [p.files for p in synthetic]
    for ys, style, label in (
        ([p.first_hypothesis_cold_s for p in synthetic], "o-", "first hypothesis, cold"),
        ([p.first_hypothesis_warm_s for p in synthetic], "o-", "first hypothesis, warm"),
        ([p.analysis_s for p in synthetic], "s--", "analysis (cold)"),
    ):
        ax.plot(xs, [float("nan") if y is None else y for y in ys], style, label=label)
    for p in real:  # a real tree is a point of its own, not on the synthetic curve
        for y, mark in ((p.first_hypothesis_cold_s, "^"), (p.first_hypothesis_warm_s, "v")):
            if y is not None:
                ax.plot([p.files], [y], mark, color="black")
        ax.annotate(p.label, (p.files, p.first_hypothesis_cold_s or 0.0), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("files in the repository")
    ax.set_ylabel("seconds")
    ax.set_title("fixbugs bench scale")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return f"plot written to {out}"


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise InputError(f"--sizes {text!r}: give file counts separated by commas") from None
    if not sizes or any(s < 10 for s in sizes):
        raise InputError("--sizes: every size is at least 10 files")
    return sizes


def scale_command(
    sizes: Annotated[
        str, typer.Option(help="Synthetic repository sizes, in files, separated by commas.")
    ] = ",".join(map(str, DEFAULT_SIZES)),
    real: Annotated[
        Path | None,
        typer.Option(help="A real tree too: a work tree, or a bug case folder (repo.tar.gz)."),
    ] = None,
    real_report: Annotated[
        Path | None, typer.Option(help="The report for --real (a case folder has its own).")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the figures (points) here as JSON.")
    ] = None,
    plot: Annotated[
        Path | None, typer.Option(help="Draw the curve here (PNG or SVG, by suffix).")
    ] = None,
) -> None:
    """Time to the first hypothesis, analysis time and peak RSS, cold and warm, by size."""
    from fixbugs.inputs.inert import terminal

    wanted = _sizes(sizes)
    work = Path(tempfile.mkdtemp(prefix="fixbugs-scale-"))
    try:
        pair = _real_tree(real, real_report, work) if real is not None else None

        def say(p: ScalePoint) -> None:
            typer.echo(
                terminal(
                    f"{p.label:>12} {p.files:>6} files  first hypothesis cold "
                    f"{_s(p.first_hypothesis_cold_s)} warm {_s(p.first_hypothesis_warm_s)}  "
                    f"analysis {p.analysis_s:.2f}s (warm {p.analysis_warm_s:.2f}s)  "
                    f"peak RSS {p.peak_rss_mb:.0f} MB  load {p.load_avg[0]:.1f}"
                )
            )

        label = real.name if real is not None else None
        points = run_scale(wanted, work, real=pair, real_label=label, on_point=say)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if json_out is not None:
        json_out.write_text(json.dumps(scale_json(points), indent=2) + "\n")
        typer.echo(terminal(f"JSON written to {json_out}"))
    if plot is not None:
        typer.echo(terminal(plot_points(points, plot)))


def _s(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}s"


def _point_main(argv: Sequence[str]) -> None:
    """``python -m fixbugs.bench.index_scale REPO REPORT``: one run, its figures as JSON."""
    repo, report = Path(argv[0]), Path(argv[1])
    index_dir = Path(os.environ["FIXBUGS_INDEX_DIR"])
    run = measure_in_process(repo, report, index_dir)
    sys.stdout.write(run.model_dump_json() + "\n")


if __name__ == "__main__":
    _point_main(sys.argv[1:])
