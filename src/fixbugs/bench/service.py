"""``fixbugs bench service``: stage queues against whole-bug workers, same cores.

Workload: copies of the bundled example (small bugs, each with its own seed
for the incidental details of its report) and one large
repository — the example plus many modules and a CPU-heavy test suite —
submitted first, so it is ahead of every small bug. The model endpoint is
the agentrt simulator in this process (``hosted`` profile by default: a
large model behind an API, about 1–3 s to the first token, then 50 tokens/s;
real waits), and the tests run for real in the sandbox.

Three runs on fresh SQLite queues, one after another:

* ``whole-bug``: one queue stage that runs the whole agent per bug
  (:func:`fixbugs.run.agent.run_bug`), one worker slot per core;
* ``staged``: the four queue stages of :mod:`fixbugs.queued`, sandbox
  stages sized to the cores, model stages with more slots;
* ``staged, small only``: the small bugs alone, for their p95 without the
  large one.

Reported: bugs per hour of each mode, p95 time from submission to the first
hypothesis, and the small bugs' p95 time to a finished report with and
without the large bug (staged).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import typer

from agentrt.metrics import percentile
from agentrt.pipeline import Pipeline, PipelineRunner, Stage, StageContext
from agentrt.queues import EpochClock, open_queue
from fixbugs.examples import example_dir
from fixbugs.queued.pipeline import StagedAgent, StagedConfig
from fixbugs.queued.spec import BugSpec
from fixbugs.run.context import AgentOptions, Models
from fixbugs.run.progress import ProgressEvent

__all__ = [
    "BenchFigures",
    "ModeRun",
    "bug_test_env",
    "run_service_bench",
    "service_command",
    "summarize",
]

_SLOW_TEST = '''"""A slow part of the suite: CPU-bound checks."""


def _burn(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


'''


@dataclass(frozen=True, slots=True)
class BugTimes:
    job: str
    big: bool
    submitted: float
    first_hypothesis: float | None
    finished: float | None


@dataclass(frozen=True, slots=True)
class ModeRun:
    mode: str
    wall_s: float
    bugs: tuple[BugTimes, ...]


@dataclass(frozen=True, slots=True)
class BenchFigures:
    cores: int
    small_bugs: int
    profile: str
    staged_per_hour: float
    whole_bug_per_hour: float
    speedup: float
    staged_p95_first_hypothesis_s: float | None
    whole_bug_p95_first_hypothesis_s: float | None
    small_p95_alone_s: float | None
    small_p95_with_big_s: float | None
    small_ratio: float | None
    whole_bug_small_p95_with_big_s: float | None
    staged_wall_s: float
    whole_bug_wall_s: float
    alone_wall_s: float
    pytest_plugins: bool = False


def _bug(dst: Path, *, big: bool, slow_tests: int, modules: int, seed: int) -> BugSpec:
    shutil.copytree(example_dir("invoice"), dst)
    repo = dst / "repo"
    # Each copy's report differs in its incidental details (ticket number,
    # quantity the customer saw work), so no two copies send the model the
    # same prompts: the simulator's answers, seeded by the prompt, vary too.
    rng = random.Random(seed)
    report = dst / "report.md"
    text = report.read_text()
    for was, now in (
        ("ticket #4412", f"ticket #{rng.randrange(1000, 99999)}"),
        ("Orders of 12 units", f"Orders of {rng.randrange(11, 40)} units"),
    ):
        if was not in text:  # else every copy would silently be the same bug
            raise RuntimeError(f"the example's report no longer says {was!r}")
        text = text.replace(was, now)
    report.write_text(text)
    if big:
        extra = repo / "shop" / "extra"
        extra.mkdir()
        (extra / "__init__.py").write_text("")
        for i in range(modules):
            body = "".join(
                f"def helper_{i}_{j}(x):\n    return x * {j} + {i}\n\n\n" for j in range(20)
            )
            (extra / f"mod_{i}.py").write_text(body)
        slow = _SLOW_TEST + "".join(
            f"def test_slow_{k}():\n    assert _burn(3_000_000) >= 0\n\n\n"
            for k in range(slow_tests)
        )
        (repo / "tests" / "test_slow_suite.py").write_text(slow)
    return BugSpec(
        title=f"{'large' if big else 'small'} bug {dst.name}",
        report=dst / "report.md",
        repo=repo,
        logs=tuple(sorted((dst / "logs").iterdir())),
        traces=tuple(sorted((dst / "traces").iterdir())),
    )


async def _run_mode(
    mode: str,
    specs: list[tuple[str, BugSpec, bool]],
    root: Path,
    *,
    cores: int,
    options: AgentOptions,
    profile: str,
) -> ModeRun:
    from agentrt.sim import in_process_model
    from fixbugs.run.agent import run_bug

    submitted: dict[str, float] = {}
    hyp: dict[str, float] = {}
    done: dict[str, float] = {}

    def publish(job: str, ev: Mapping[str, Any]) -> None:
        now = time.monotonic()
        if ev["kind"] == "hypothesis":
            hyp.setdefault(job, now)
        elif ev["kind"] == "run_finished":
            done.setdefault(job, now)

    q = open_queue(f"sqlite:///{root / f'{mode}.db'}", clock=EpochClock())
    async with in_process_model(profile) as sim:
        # the simulator stands for a configured endpoint: trusted high, every model step runs
        models = Models(map=sim, judge=sim, judge_trust="high", map_trust="high")

        async def opts() -> AgentOptions:
            return options

        if mode == "whole-bug":

            async def whole(ctx: StageContext) -> Mapping[str, Any]:
                inputs = await asyncio.to_thread(BugSpec.from_payload(ctx.input).load)

                def sink(ev: ProgressEvent) -> None:
                    publish(ctx.job, ev.to_dict())

                report = await run_bug(inputs, models=models, options=options, sink=sink)
                return {"validated": report.validated}

            pipeline = Pipeline(
                [Stage("investigate", whole, concurrency=cores, lease_s=600.0)],
                name="whole-bug",
                capacity=1000,
            )
        else:
            agent = StagedAgent(
                models,
                opts,
                clock=q.clock,
                publish=publish,
                config=StagedConfig(sandbox_slots=cores, lease_s=600.0, capacity=1000),
            )
            pipeline = agent.pipeline()
        runner = PipelineRunner(pipeline, q, poll_s=0.05)
        start = time.monotonic()
        for job, spec, _big in specs:
            submitted[job] = time.monotonic()
            await runner.submit(job, job, spec.payload())
        await runner.run(until_idle=True)
        wall = time.monotonic() - start
    await q.aclose()
    bugs = tuple(
        BugTimes(
            job,
            big,
            0.0,
            hyp[job] - submitted[job] if job in hyp else None,
            done[job] - submitted[job] if job in done else None,
        )
        for job, _spec, big in specs
    )
    return ModeRun(mode, wall, bugs)


def _p95(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    p = percentile(got, 95)
    return None if p is None else round(p, 2)


def summarize(
    cores: int, small: int, staged: ModeRun, whole: ModeRun, alone: ModeRun, profile: str = ""
) -> BenchFigures:
    """The figures of three runs (pure: tested without running anything)."""

    def per_hour(r: ModeRun) -> float:
        n = sum(1 for b in r.bugs if b.finished is not None)
        return round(n / r.wall_s * 3600.0, 1) if r.wall_s > 0 else 0.0

    def small_p95(r: ModeRun) -> float | None:
        return _p95([b.finished for b in r.bugs if not b.big])

    s, w = per_hour(staged), per_hour(whole)
    with_big, without = small_p95(staged), small_p95(alone)
    return BenchFigures(
        cores=cores,
        small_bugs=small,
        profile=profile,
        staged_per_hour=s,
        whole_bug_per_hour=w,
        speedup=round(s / w, 2) if w else 0.0,
        staged_p95_first_hypothesis_s=_p95([b.first_hypothesis for b in staged.bugs]),
        whole_bug_p95_first_hypothesis_s=_p95([b.first_hypothesis for b in whole.bugs]),
        small_p95_alone_s=without,
        small_p95_with_big_s=with_big,
        small_ratio=round(with_big / without, 2) if with_big and without else None,
        whole_bug_small_p95_with_big_s=small_p95(whole),
        staged_wall_s=round(staged.wall_s, 2),
        whole_bug_wall_s=round(whole.wall_s, 2),
        alone_wall_s=round(alone.wall_s, 2),
    )


def bug_test_env(command_env: Mapping[str, str], *, pytest_plugins: bool) -> dict[str, str]:
    """The variables of the bench bugs' test commands.

    The example's tests use no pytest plugin. The interpreter is this
    process's, whose dev install autoloads FixBugs' own test plugins
    (schemathesis, hypothesis: about 3 CPU-s of imports per pytest run on
    these machines), which a user's project would not carry; so, unless
    asked, pytest autoloads none.
    """
    out = dict(command_env)
    if not pytest_plugins:
        out["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return out


async def run_service_bench(
    *,
    small: int = 8,
    cores: int | None = None,
    slow_tests: int = 8,
    modules: int = 60,
    profile: str = "hosted",
    max_candidates: int = 40,
    pytest_plugins: bool = False,
) -> BenchFigures:
    from fixbugs.pyenv.userenv import Interpreter
    from fixbugs.run.agent import env_for_interpreter

    cores = cores or max(1, os.cpu_count() or 1)
    env = await asyncio.to_thread(
        env_for_interpreter, Interpreter(Path(sys.executable), "--python")
    )
    test_env = bug_test_env(env.command_env(), pytest_plugins=pytest_plugins)
    options = AgentOptions(test_env=test_env, python=env, max_candidates=max_candidates)
    with tempfile.TemporaryDirectory(prefix="fixbugs-bench-service-") as tmp:
        root = Path(tmp)
        big_spec = _bug(root / "big", big=True, slow_tests=slow_tests, modules=modules, seed=0)
        big = [("big", big_spec, True)]
        smalls = [
            (
                f"small{i}",
                _bug(root / f"small{i}", big=False, slow_tests=0, modules=0, seed=i + 1),
                False,
            )
            for i in range(small)
        ]
        whole, staged, alone = [
            await _run_mode(mode, specs, root, cores=cores, options=options, profile=profile)
            for mode, specs in (
                ("whole-bug", big + smalls),
                ("staged", big + smalls),
                ("staged-alone", smalls),
            )
        ]
    figures = summarize(cores, small, staged, whole, alone, profile)
    return replace(figures, pytest_plugins=pytest_plugins)


def service_command(
    small: Annotated[int, typer.Option(help="Copies of the bundled example.")] = 8,
    cores: Annotated[
        int | None, typer.Option(help="Sandbox slots (and whole-bug workers); default: cores.")
    ] = None,
    slow_tests: Annotated[int, typer.Option(help="CPU-heavy tests in the large repository.")] = 8,
    profile: Annotated[
        str, typer.Option(help="Simulator latency profile (agentrt sim profiles).")
    ] = "hosted",
    pytest_plugins: Annotated[
        bool,
        typer.Option(
            help="Let pytest autoload this interpreter's plugins in the bugs' test runs "
            "(off: the example needs none, and a dev install's cost seconds per run)."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Stage queues vs one whole-bug worker per slot, on a mixed workload."""
    if small < 1:
        raise typer.BadParameter("--small must be at least 1")
    from agentrt.sim import PROFILES

    if profile not in PROFILES:
        raise typer.BadParameter(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    figures = asyncio.run(
        run_service_bench(
            small=small,
            cores=cores,
            slow_tests=slow_tests,
            profile=profile,
            pytest_plugins=pytest_plugins,
        )
    )
    d = asdict(figures)
    if as_json:
        print(json.dumps(d, indent=2))
        return
    print(
        f"cores: {d['cores']}, small bugs: {d['small_bugs']} (+1 large, submitted first),"
        f" simulator profile {d['profile']},"
        f" pytest plugins {'autoloaded' if d['pytest_plugins'] else 'off'}"
    )
    print(
        f"bugs/hour: staged {d['staged_per_hour']}, whole-bug {d['whole_bug_per_hour']}"
        f" ({d['speedup']}x; target >= 1.5x)"
    )
    print(
        f"p95 to first hypothesis: staged {d['staged_p95_first_hypothesis_s']} s,"
        f" whole-bug {d['whole_bug_p95_first_hypothesis_s']} s"
    )
    print(
        f"small bugs' p95: alone {d['small_p95_alone_s']} s, with the large one"
        f" {d['small_p95_with_big_s']} s (ratio {d['small_ratio']}; target <= 1.25)"
    )
