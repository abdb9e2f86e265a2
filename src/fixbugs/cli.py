"""The `fixbugs` command line.

Exit statuses of ``fixbugs run``: 0 the run finished (with or without a
validated fix: the report says which); 2 a user error, printed as one line
(bad input, no usable interpreter, a model endpoint that is unreachable,
refuses the credentials or does not serve the model); 3 the run finished
degraded: the model failed during the run and the result stands on static
evidence alone. The same one-line rule as ``agentrt``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markdown import Markdown

from agentrt.cli import run_app
from fixbugs.errors import InputError
from fixbugs.examples import EXAMPLES, example_dir
from fixbugs.inputs.inert import quote_name, strip_controls, terminal
from fixbugs.run.context import AgentOptions
from fixbugs.run.model_steps import ModelStepsOption
from fixbugs.run.progress import JudgmentPrinter, ProgressEvent, RankedFilesData

_DEFAULTS = AgentOptions()  # the run options' defaults, which the CLI's defaults show

app = typer.Typer(
    name="fixbugs",
    help="FixBugs, an AI debugging agent on agentrt.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# What these print holds the repository's strings (file names, test output,
# the report's title): every one goes through fixbugs.inputs.inert.terminal
# (controls stripped, rich markup escaped), and emoji codes are not rendered.
console = Console(emoji=False)
err_console = Console(stderr=True, emoji=False)

EXIT_DEGRADED = 3  # the model failed during the run; static evidence only


_judgment = JudgmentPrinter(lead=" " * 22 + "judgment: ")


def render_event(ev: ProgressEvent) -> None:
    """One line per event, as it happens; the root-cause judgment word by word.

    Only ``head`` is markup; a message, a path or a reason is the
    repository's text and is printed inert.
    """
    if ev.stage == "models":
        return  # the models line: printed first already (run_from_paths' on_models)
    piece = _judgment.feed(ev)
    if piece is not None:
        console.out(strip_controls(piece), end="", highlight=False)
        return
    closing = _judgment.close()
    if closing:
        console.out(closing, end="")
    head = f"[dim]{ev.at_s:7.2f}s[/] [cyan]{terminal(ev.stage):<12}[/]"
    message = terminal(ev.message)
    if ev.kind == "hypothesis":
        console.print(f"{head} [bold yellow]first hypothesis:[/] {message}")
    elif isinstance(ev.data, RankedFilesData):
        console.print(f"{head} {message}")
        for i, f in enumerate(ev.data.files[:5], 1):
            path = terminal(quote_name(f.path))
            reasons = terminal("; ".join(f.reasons[:2]))
            console.print(f"{'':22}{i}. {path}  [dim]{f.score:.3f}  {reasons}[/]")
    elif ev.kind == "validated":
        console.print(f"{head} [bold green]{message}[/]")
    elif ev.kind in {"stage_started", "candidate"}:
        console.print(f"{head} [dim]{message}[/]", highlight=False)
    else:
        console.print(f"{head} {message}", highlight=False)


@app.command()
def run(
    report: Annotated[
        Path | None, typer.Option(help="Bug report: markdown, text or GitHub issue JSON.")
    ] = None,
    repo: Annotated[
        Path | None, typer.Option(help="The repository (a path or a git work tree).")
    ] = None,
    logs: Annotated[
        list[Path] | None,
        typer.Option(help="Log files or folders (text, JSON lines, logfmt; .gz or .zip)."),
    ] = None,
    traces: Annotated[list[Path] | None, typer.Option(help="OTLP JSON trace files.")] = None,
    test: Annotated[
        str | None, typer.Option(help="A command that fails because of the bug.")
    ] = None,
    screenshot: Annotated[
        list[Path] | None,
        typer.Option(
            help="Screenshots (PNG, JPEG, GIF, WebP): their text is read by OCR inside the sandbox."
        ),
    ] = None,
    example: Annotated[
        str | None, typer.Option(help=f"Run a bundled example: {', '.join(EXAMPLES)}.")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the JSON report here.")
    ] = None,
    markdown_out: Annotated[
        Path | None, typer.Option("--markdown", help="Write the markdown report here.")
    ] = None,
    config: Annotated[
        Path | None, typer.Option(help="agentrt config TOML (endpoints, roles).")
    ] = None,
    no_model: Annotated[
        bool, typer.Option("--no-model", help="Static signals only; no model calls.")
    ] = False,
    apply: Annotated[bool, typer.Option(help="Apply a validated patch to --repo.")] = False,
    branch: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Commit a validated fix on a new branch NAME of --repo, one commit on HEAD, "
            "without touching the work tree, the index or the current branch (none of the "
            "repository's git config, filters or hooks runs). Author and committer: "
            "$GIT_AUTHOR_NAME/$GIT_AUTHOR_EMAIL (and GIT_COMMITTER_*) if set, else "
            "'FixBugs <fixbugs@localhost>'.",
        ),
    ] = None,
    pr_body: Annotated[
        Path | None,
        typer.Option(
            "--pr-body",
            metavar="FILE",
            help="Write the pull-request text (markdown: summary, root cause with file:line, "
            "reproduction, what validated the fix, what it did not check) to FILE.",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            help="With --apply or --branch: apply or commit a fix whose verdict is 'passes "
            "tests' (the tests pass but a check does not hold) too."
        ),
    ] = False,
    python: Annotated[
        Path | None,
        typer.Option(
            help="The interpreter that runs the project's tests (default: $VIRTUAL_ENV, "
            "then a .venv/venv in the repository, then python3 on PATH)."
        ),
    ] = None,
    repair_budget: Annotated[
        float,
        typer.Option(
            min=1,
            help="Seconds the repair engine may spend starting candidates (one that passed "
            "the failing tests still finishes its checks).",
        ),
    ] = 300.0,
    repair_candidates: Annotated[
        int, typer.Option(min=1, help="Most repair candidates to validate.")
    ] = 300,
    test_timeout: Annotated[
        float,
        typer.Option(min=1, metavar="SECONDS", help="Time limit of one test command's run."),
    ] = _DEFAULTS.test_timeout_s,
    suite_timeout: Annotated[
        float,
        typer.Option(
            min=1,
            metavar="SECONDS",
            help="Time limit of a changed module's tests and of each shard of the whole "
            "suite in validation, and of their baselines.",
        ),
    ] = _DEFAULTS.suite_timeout_s,
    model_steps: ModelStepsOption = None,
    max_cost: Annotated[
        float | None,
        typer.Option(
            min=0,
            metavar="DOLLARS",
            help="The run's model budget in dollars, at the endpoints' configured prices: "
            "reached, the model work ends with a note and the run goes on from the evidence.",
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(min=0, help="The run's model budget in tokens (input + output), likewise."),
    ] = None,
) -> None:
    """Investigate one bug: evidence, reproduction, root cause, minimal fix, proof."""
    from fixbugs.run.agent import run_from_paths

    if example:
        base = example_dir(example)
        report = report or base / "report.md"
        repo = repo or base / "repo"
        logs = logs or sorted((base / "logs").glob("*"))
        traces = traces or sorted((base / "traces").glob("*"))
    if report is None or repo is None:
        raise InputError("give --report and --repo (or --example invoice)")
    if branch is not None:
        from fixbugs.run.branch import check_branch

        if example:
            raise InputError("--branch does not modify the bundled example; copy it first")
        check_branch(repo, branch)  # refused now, not after the run
    from fixbugs.run.model_steps import ModelSteps

    steps = ModelSteps.parse(model_steps) if model_steps is not None else None
    result = asyncio.run(
        run_from_paths(
            report=report,
            repo=repo,
            logs=tuple(logs or ()),
            traces=tuple(traces or ()),
            test=test,
            screenshots=tuple(screenshot or ()),
            config=config,
            use_model=not no_model,
            python=python,
            repair_budget_s=repair_budget,
            repair_candidates=repair_candidates,
            test_timeout_s=test_timeout,
            suite_timeout_s=suite_timeout,
            model_steps=steps,
            max_cost_usd=max_cost,
            max_model_tokens=max_tokens,
            on_event=render_event,
            on_models=lambda line: console.print(terminal(line), highlight=False),
        )
    )
    from fixbugs.run.report import verdict_line

    console.print(Markdown(result.markdown()))
    console.print(terminal(verdict_line(result.model)), highlight=False)
    if json_out:
        result.write_json(json_out)
        console.print(f"JSON report written to {terminal(str(json_out))}")
    if markdown_out:
        result.write_markdown(markdown_out)
    if pr_body is not None:
        from fixbugs.run.handoff import write_pr_body

        console.print(terminal(write_pr_body(result.model, pr_body)), highlight=False)
    refused: InputError | None = None
    if branch is not None:  # before --apply: the work tree is still what the run read
        from fixbugs.run.branch import branch_report

        try:
            line = branch_report(result.model, repo, branch, force=force)
            console.print(terminal(line), highlight=False)
        except InputError as exc:
            refused = exc  # said (exit 2) once --apply has done its part
    if apply:
        from fixbugs.run.agent import apply_report

        if example:
            raise InputError("--apply does not modify the bundled example; copy it first")
        console.print(terminal(apply_report(result.model, repo, force=force)), highlight=False)
    if refused is not None:
        raise refused
    calls = result.model.model_calls
    if result.model.degraded and calls is not None:
        err_console.print(
            f"model unavailable: {calls.failed} of {calls.total} calls failed; "
            "the result stands on static evidence (exit 3)",
            highlight=False,
        )
        raise typer.Exit(EXIT_DEGRADED)


from fixbugs.eval.command import eval_command  # noqa: E402

app.command("eval")(eval_command)

from fixbugs.bench.repair import bench_app  # noqa: E402

app.add_typer(bench_app, name="bench")

from fixbugs.bench.service import service_command as bench_service_command  # noqa: E402

bench_app.command("service")(bench_service_command)

from fixbugs.bench.workers_cli import workers_command as bench_workers_command  # noqa: E402

bench_app.command("workers")(bench_workers_command)

from fixbugs.bench.steps import steps_command as bench_steps_command  # noqa: E402

bench_app.command("steps")(bench_steps_command)

from fixbugs.bench.index_scale import scale_command as bench_scale_command  # noqa: E402

bench_app.command("scale")(bench_scale_command)

from fixbugs.bench.hostile import hostile_command as bench_hostile_command  # noqa: E402

bench_app.command("hostile")(bench_hostile_command)

from fixbugs.eval.tokenmath import tokenmath_command as bench_tokenmath_command  # noqa: E402

bench_app.command("tokenmath")(bench_tokenmath_command)

from fixbugs.bench.models_cli import models_command as bench_models_command  # noqa: E402

bench_app.command("models")(bench_models_command)

from fixbugs.bench.validate import validate_command as bench_validate_command  # noqa: E402

bench_app.command("validate")(bench_validate_command)

from fixbugs.eval.pool.build import pool_app  # noqa: E402

app.add_typer(pool_app, name="pool")

from fixbugs.queued.worker import worker_command  # noqa: E402

app.command("worker")(worker_command)

from fixbugs.queued.status import status_command  # noqa: E402

app.command("status")(status_command)

from fixbugs.service.serve import serve_command  # noqa: E402

app.command("serve")(serve_command)


@app.command()
def schema(
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the schema here instead of stdout.")
    ] = None,
) -> None:
    """Print the JSON Schema of the report `fixbugs run --json` writes."""
    import json

    from fixbugs.run.report_schema import report_json_schema

    text = json.dumps(report_json_schema(), indent=2) + "\n"
    if out is None:
        typer.echo(text, nl=False)
    else:
        from fixbugs.sandbox.untrusted import write_output

        write_output(out, text.encode(), what="--out")


@app.command()
def version() -> None:
    """Print the version."""
    from importlib.metadata import version as v

    typer.echo(v("fixbugs"))


def main(argv: list[str] | None = None) -> None:
    """Entry point of `fixbugs`."""
    run_app(app, argv)
