"""`fixbugs bench workers`: its figures from injected runs (pure), its bugs, its queue, its errors.

No run is timed here: a real one takes minutes (the simulator's hosted
latency), and the command itself is the measurement. How a run's outcome is read from
the queue's records and reports is checked on the staged agent's own run
(``tests/fixbugs/queued/test_staged.py``), so the suite runs the example bug once.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from fixbugs.bench.workers import (
    _model_bugs,
    _queue_store,
    _sandbox_bugs,
    parse_counts,
)
from fixbugs.bench.workers_figures import (
    BugOutcome,
    Measured,
    WorkersFigures,
    WorkerShape,
    figures,
    rows_of,
    table_lines,
)
from fixbugs.errors import InputError
from fixbugs.eval.case import Case

SHAPE = WorkerShape(model_slots=2, sandbox_slots=1)


def _m(workload: str, workers: int, finished: int, wall: float, **kw: object) -> Measured:
    return Measured(workload, workers, finished, finished, finished, wall, 3.0, **kw)  # type: ignore[arg-type]


def _figures(
    measured: list[Measured], *, cores: int = 2, queue: str = "redis", model_limit: int = 64
) -> WorkersFigures:
    """``figures`` of ``measured`` on the set-up these tests share (hosted profile, SHAPE)."""
    return figures(
        measured, cores=cores, queue=queue, profile="hosted", model_limit=model_limit, shape=SHAPE
    )


def test_bugs_per_hour_and_speedup_against_the_smallest_count() -> None:
    rows = rows_of(
        [
            _m("model-bound", 2, 8, 200.0),  # 144/h
            _m("model-bound", 1, 4, 200.0, workers_cpu_s=40.0),  # 72/h, 10 CPU-s a bug
            _m("sandbox-bound", 2, 4, 360.0),  # 40/h: its own base
        ]
    )
    by = {(r.workload, r.workers): r for r in rows}
    assert by["model-bound", 1].per_hour == 72.0 and by["model-bound", 1].speedup == 1.0
    assert by["model-bound", 2].per_hour == 144.0 and by["model-bound", 2].speedup == 2.0
    assert by["model-bound", 1].cpu_s_per_bug == 10.0
    assert by["model-bound", 2].cpu_s_per_bug is None  # not measured
    assert by["sandbox-bound", 2].per_hour == 40.0 and by["sandbox-bound", 2].speedup == 1.0


def test_unfinished_bugs_do_not_count() -> None:
    (row,) = rows_of([Measured("model-bound", 1, 4, 0, 0, 0.0, 0.0)])
    assert row.per_hour == 0.0 and row.speedup is None and row.cpu_s_per_bug is None


def test_a_workload_that_stops_gaining_saturates_at_the_count_before() -> None:
    f = _figures(
        [
            _m("sandbox-bound", 1, 2, 240.0, workers_cpu_s=88.0),  # 30/h
            _m("sandbox-bound", 2, 4, 262.0, workers_cpu_s=176.0, cpu_busy=0.97),  # 55/h
            _m("sandbox-bound", 4, 8, 480.0, workers_cpu_s=352.0, cpu_busy=0.99),  # 60/h
        ],
    )
    (sat,) = f.saturation
    assert sat.at == 2
    assert "sandbox-bound: saturates at 2 workers (2 -> 4 gave 1.09x of an ideal 2.00x)" in sat.line
    assert "4 x 1 sandbox slots = 4 >= 2 cores" in sat.line
    assert "the workers used 0.73 cores (44.0 CPU-s a bug)" in sat.line
    assert "machine CPU 99% busy (no core left)" in sat.line
    assert "model slots" not in sat.line  # no model in this workload


def test_scaling_all_the_way_is_not_saturated_and_says_what_the_last_count_asks() -> None:
    f = _figures(
        [
            _m("model-bound", 1, 4, 200.0),
            _m("model-bound", 2, 8, 206.0),
            _m("model-bound", 4, 16, 216.0, cpu_busy=0.6, model_peak=20, model_queued=0),
        ],
    )
    (sat,) = f.saturation
    assert sat.at is None
    assert sat.line.startswith("model-bound: not saturated up to 4 workers (1.94x at 2, 3.7x at 4)")
    assert "4 x 2 model slots = 8 < the model's limit 64" in sat.line
    assert "machine CPU 60% busy;" in sat.line


def test_a_first_step_below_half_of_linear_saturates_at_one_worker() -> None:
    f = _figures(
        [
            _m("model-bound", 1, 4, 200.0),
            _m("model-bound", 2, 8, 300.0, model_peak=8, model_queued=5),  # 1.33x
        ],
        cores=16,
        queue="sqlite",
        model_limit=4,
    )
    (sat,) = f.saturation
    assert sat.at == 1
    assert "saturates at 1 worker (1 -> 2 gave 1.33x" in sat.line
    assert "2 x 2 model slots = 4 >= the model's limit 4" in sat.line
    assert "5 requests queued for a model slot" in sat.line


def test_the_table_lists_every_run_side_by_side_then_the_lines() -> None:
    f = _figures(
        [
            _m("model-bound", 1, 4, 200.0, cpu_busy=0.5, model_peak=6, model_queued=0),
            _m(
                "sandbox-bound",
                1,
                2,
                240.0,
                errors=("worker exited 2: error: boom",),
                bugs=(
                    BugOutcome("c-1 (bug 0)", "validated", "validated: the tests pass", 80.0),
                    BugOutcome("c-2 (bug 1)", "no_fix", "no candidate passed", 301.5),
                ),
            ),
        ],
    )
    lines = table_lines(f)
    assert lines[0].split()[:3] == ["workload", "workers", "finished"]
    assert lines[1].split() == [
        "model-bound", "1", "4/4", "4", "200.0", "3.0", "72.0", "1.00x", "-", "50%", "6/0"
    ]  # fmt: skip
    assert lines[2].split()[:8] == [
        "sandbox-bound", "1", "2/2", "2", "240.0", "3.0", "30.0", "1.00x"
    ]  # fmt: skip
    assert lines[2].split()[-1] == "-"  # no model
    assert len({len(line) for line in lines[:3]}) == 1  # aligned columns
    assert lines[3].startswith("model-bound: one worker count run, nothing to compare; at 1:")
    assert lines[-2:] == [
        "sandbox-bound x1: worker exited 2: error: boom",
        "sandbox-bound x1: c-2 (bug 1) no_fix after 301.5 s: no candidate passed",
    ]


def test_worker_counts() -> None:
    assert parse_counts("4,1,2,2") == (1, 2, 4)
    for bad in ("0,1", "one", ""):
        with pytest.raises(InputError, match="--workers"):
            parse_counts(bad)


def test_each_worker_gets_the_same_list_of_bugs(tmp_path: Path) -> None:
    specs = _model_bugs(tmp_path / "m", per_worker=2, workers=2)
    reports = [s.report.read_text() for s in specs]
    assert reports[0] == reports[2] and reports[1] == reports[3]
    assert reports[0] != reports[1]  # the list's own seeds differ
    assert len({s.repo for s in specs}) == len({s.index_dir for s in specs}) == 4

    case_dir = tmp_path / "case"
    (case_dir / "src").mkdir(parents=True)
    (case_dir / "src" / "m.py").write_text("x = 1\n")
    (case_dir / "report.md").write_text("# t fails\n")
    with tarfile.open(case_dir / "repo.tar.gz", "w:gz") as tar:
        tar.add(case_dir / "src", arcname="src")
        tar.add(case_dir / "report.md", arcname="README.md")
    cases = [Case(f"c-{i}", case_dir, "", f"python -m pytest t{i}", "3.8", ()) for i in range(3)]
    specs = _sandbox_bugs(tmp_path / "s", cases, per_worker=2, workers=3)
    assert [s.test for s in specs] == ["python -m pytest t0", "python -m pytest t1"] * 3
    assert all((s.repo / "src" / "m.py").read_text() == "x = 1\n" for s in specs)
    assert len({s.repo for s in specs}) == 6


def _listening(url: str) -> bool:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_the_queue_is_a_private_redis_server_that_is_gone_after(tmp_path: Path) -> None:
    async def use() -> tuple[str, str, bool]:
        async with _queue_store(tmp_path) as (url, kind):
            return url, kind, _listening(url)

    url, kind, up = asyncio.run(use())
    assert kind == "redis" and up
    assert not _listening(url)


def test_without_redis_server_the_queue_is_a_sqlite_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("fixbugs.bench.workers.shutil.which", lambda _name: None)

    async def use() -> tuple[str, str]:
        async with _queue_store(tmp_path) as got:
            return got

    assert asyncio.run(use()) == (f"sqlite:///{tmp_path / 'queue.db'}", "sqlite")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from fixbugs.cli import main; main()", "bench", "workers", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--workers", "0,2"), "--workers '0,2'"),
        (("--workload", "gpu-bound"), "--workload 'gpu-bound'"),
        (("--profile", "nope"), "--profile 'nope'"),
        (("--cases", "/nonexistent/cases"), "not a folder"),
    ],
)
def test_bad_input_is_one_line(args: tuple[str, ...], said: str) -> None:
    p = _cli(*args)
    assert p.returncode == 2, p.stderr
    assert said in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_an_unknown_case_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "c-1").mkdir()
    (tmp_path / "c-1" / "case.json").write_text(json.dumps({"id": "c-1", "python": "3.8"}))
    (tmp_path / "c-1" / "report.md").write_text("# t fails\n")
    p = _cli("--cases", str(tmp_path), "--case", "c-2", "--workload", "sandbox-bound")
    assert p.returncode == 2, p.stderr
    assert f"--cases {tmp_path}: no case c-2" in p.stderr and "Traceback" not in p.stderr
