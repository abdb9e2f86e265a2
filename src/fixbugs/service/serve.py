"""``fixbugs serve``: the API, the dashboard and the workers in one process.

The workers run the agent's stages as queue stages (:mod:`fixbugs.queued`),
a worker pool per stage, so a bug waiting on the model holds no core;
``--whole-bug`` runs the old way instead, one whole-bug ``investigate`` job
per worker slot (``fixbugs bench service`` compares the two).

Embedded defaults: a SQLite queue in the workspace and the configured
(local) models. With ``--queue redis://…`` the same command on other
machines adds workers (``--no-api``), and the API host can run with
``--workers 0``; the workspace must then be shared storage, since the
queue carries paths to each bug's files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit, urlunsplit

import typer
from fastapi import FastAPI

from agentrt import SystemClock, UserError, is_loopback_host
from agentrt.observability import ExporterKind, TracingConfig
from agentrt.queues import EpochClock, open_queue
from fixbugs.errors import InputError
from fixbugs.run.context import Models
from fixbugs.service.admission import tenant_share
from fixbugs.service.app import create_app
from fixbugs.service.auth import DEFAULT_TENANT, ApiKeys, parse_keys
from fixbugs.service.investigate import agent_investigator
from fixbugs.service.job_files import Limits, Workspace
from fixbugs.service.jobs import REPORT_TTL_S, Investigator, JobService
from fixbugs.service.same_origin import host_name
from fixbugs.service.telemetry import ServiceTelemetry

__all__ = ["ServeConfig", "build_app", "serve_command"]


@dataclass(frozen=True, slots=True)
class ServeConfig:
    workspace: Path = Path(".fixbugs-service")
    queue: str | None = None  # default: sqlite in the workspace
    workers: int = 2
    capacity: int = 16
    tenant_capacity: int | None = None  # one tenant's bound; None: tenant_share's default
    api_keys: tuple[str, ...] = ()  # bare keys: the "default" tenant
    tenant_keys: dict[str, str] = field(default_factory=dict)  # key -> tenant
    metrics_key: str | None = None  # when set, /metrics requires it
    report_ttl_s: float = REPORT_TTL_S
    max_upload_bytes: int = 64 << 20
    body_timeout_s: float = 30.0  # a body with no byte for this long is cut (408)
    body_deadline_s: float = 600.0  # ... and one still incomplete after this long
    allowed_hosts: tuple[str, ...] = ()  # Host names a key-less server answers besides its own
    limits: Limits = field(default_factory=Limits)
    tracing: TracingConfig = field(default_factory=lambda: TracingConfig(service_name="fixbugs"))
    max_deliveries: int = 2
    whole_bug: bool = False  # one whole-bug job per slot, not the stage queues (fixbugs.queued)


def build_app(
    cfg: ServeConfig,
    *,
    models: Models | None,
    investigator: Investigator | None = None,
    run_workers: bool = True,
) -> tuple[FastAPI, JobService, ServiceTelemetry]:
    """Wire workspace, queue, investigator, telemetry and the app from ``cfg``.

    ``investigator`` (default: the agent) runs whole bugs, so it needs
    ``cfg.whole_bug``: the stage queues would leave it unused.
    """
    if investigator is not None and not cfg.whole_bug:
        raise ValueError("an investigator runs whole bugs: set ServeConfig(whole_bug=True)")
    ws = Workspace(cfg.workspace, cfg.limits)
    url = cfg.queue or f"sqlite:///{ws.root / 'queue.db'}"
    backend = open_queue(
        url, clock=EpochClock(), max_deliveries=cfg.max_deliveries, namespace="fixbugs"
    )
    events = None
    if url.split("://")[0] in {"redis", "rediss", "unix"}:
        from fixbugs.queued.event_log import open_events

        events = open_events(url, namespace="fixbugs")  # live events from any worker
    staged = None
    if not cfg.whole_bug:
        from fixbugs.queued import StagedAgent, StagedConfig
        from fixbugs.queued.pipeline import Publish
        from fixbugs.queued.service import probed_options

        options = probed_options(use_model=models is not None)

        def staged(publish: Publish) -> StagedAgent:
            return StagedAgent(
                models,
                options,
                clock=EpochClock(),
                publish=publish,
                config=StagedConfig(capacity=cfg.capacity),
            )

    clients = [models.map, models.judge] if models else []
    telemetry = ServiceTelemetry(cfg.tracing, clients)
    keys = {k: DEFAULT_TENANT for k in cfg.api_keys} | dict(cfg.tenant_keys)
    tenant_capacity = cfg.tenant_capacity
    if tenant_capacity is None:
        tenant_capacity = tenant_share(cfg.capacity, len(set(keys.values())))
    service = JobService(
        backend,
        investigator or agent_investigator(models),
        ws,
        clock=SystemClock(),
        capacity=cfg.capacity,
        workers=cfg.workers,
        observer=telemetry,
        flow=telemetry.flow,
        report_ttl_s=cfg.report_ttl_s,
        events=events,
        staged=staged,
        tenant_capacity=tenant_capacity,
    )
    app = create_app(
        service,
        keys=ApiKeys(keys),
        max_request_bytes=cfg.max_upload_bytes,
        metrics=telemetry.exposition_for(service),
        run_workers=run_workers,
        metrics_key=cfg.metrics_key,
        body_timeout_s=cfg.body_timeout_s,
        body_deadline_s=cfg.body_deadline_s,
        allowed_hosts=cfg.allowed_hosts,
    )
    return app, service, telemetry


_STAGED_GONE = "fixbugs serve runs the stage queues by default; --whole-bug runs whole bugs"


def _shown(url: str) -> str:
    """A queue URL fit for a log line: its password, if any, left out."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit(parts._replace(netloc=user + parts.netloc.rpartition("@")[2]))


def _mode(cfg: ServeConfig) -> str:
    return "whole bugs" if cfg.whole_bug else "stage queues"


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    workspace: Annotated[Path, typer.Option(help="Where jobs' files and the queue live.")] = Path(
        ".fixbugs-service"
    ),
    queue: Annotated[
        str | None,
        typer.Option(
            envvar="FIXBUGS_QUEUE",
            help="Queue URL: sqlite:///PATH (default), redis://HOST:PORT or"
            " rediss://USER:PASSWORD@HOST:PORT (TLS); from the environment, a password stays"
            " out of the process list.",
        ),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            help="Worker slots in this process; 0: none. With --whole-bug, bugs at once;"
            " on the stage queues, sandbox stages take one slot per core."
        ),
    ] = 2,
    capacity: Annotated[int, typer.Option(help="Bugs queued or running before 429.")] = 16,
    tenant_capacity: Annotated[
        int | None,
        typer.Option(
            help="One tenant's bugs queued or running before its 429"
            " (default: half of --capacity with two tenants or more)."
        ),
    ] = None,
    api_key: Annotated[
        list[str] | None,
        typer.Option(help="Accepted key, TENANT:KEY (repeat); or FIXBUGS_API_KEYS=t1:k1,t2:k2."),
    ] = None,
    api_key_file: Annotated[
        Path | None,
        typer.Option(help="File of TENANT:KEY lines (keeps keys out of the process list)."),
    ] = None,
    metrics_key: Annotated[
        str | None, typer.Option(help="Key /metrics requires; or FIXBUGS_METRICS_KEY.")
    ] = None,
    report_ttl_hours: Annotated[
        float, typer.Option(help="How long finished reports are kept, hours.")
    ] = REPORT_TTL_S / 3600,
    max_upload_mb: Annotated[int, typer.Option(help="Largest request body, MiB.")] = 64,
    body_timeout_s: Annotated[
        float, typer.Option(help="Cut a request body that sends nothing for this long, s.")
    ] = 30.0,
    body_deadline_s: Annotated[
        float, typer.Option(help="Cut a request body still incomplete after this long, s.")
    ] = 600.0,
    header_timeout_s: Annotated[
        float,
        typer.Option(
            help="Close a connection whose request headers are not complete this long after"
            " it opened or after its previous response, s."
        ),
    ] = 10.0,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(help="Without keys: another Host name to answer (repeat); no port."),
    ] = None,
    config: Annotated[Path | None, typer.Option(help="agentrt config TOML (models).")] = None,
    no_model: Annotated[bool, typer.Option("--no-model", help="Static signals only.")] = False,
    no_api: Annotated[bool, typer.Option("--no-api", help="Workers only (with --queue).")] = False,
    whole_bug: Annotated[
        bool,
        typer.Option(
            "--whole-bug",
            help="Run each bug as one job on one worker slot, not on the stage queues.",
        ),
    ] = False,
    staged: Annotated[
        bool,
        typer.Option("--staged", hidden=True, help="Removed: the stage queues are the default."),
    ] = False,
    traces: Annotated[str, typer.Option(help="Trace exporter: none, console or otlp.")] = "none",
    otlp_endpoint: Annotated[str | None, typer.Option(help="OTLP/HTTP traces URL.")] = None,
) -> None:
    """Serve the HTTP API, the live dashboard and the workers."""
    import asyncio

    import uvicorn

    from fixbugs.run.agent import models_from_config
    from fixbugs.service.header_timeout import header_timeout_h11

    if staged:  # a deployment written for the old default learns what changed
        raise UserError(f"--staged is gone: {_STAGED_GONE}")
    try:
        keys = parse_keys(",".join(api_key or ()), source="--api-key")
        keys |= parse_keys(os.environ.get("FIXBUGS_API_KEYS", ""), source="FIXBUGS_API_KEYS")
        if api_key_file is not None:
            keys |= dict(ApiKeys.from_file(api_key_file).items())
    except InputError as exc:
        raise UserError(str(exc)) from None
    metrics_key = metrics_key or os.environ.get("FIXBUGS_METRICS_KEY") or None
    if report_ttl_hours <= 0:
        raise UserError("--report-ttl-hours must be positive")
    if body_timeout_s <= 0 or body_deadline_s <= 0:
        raise UserError("--body-timeout-s and --body-deadline-s must be positive")
    if not header_timeout_s > 0:
        raise UserError("--header-timeout-s must be positive")
    try:
        allowed_hosts = tuple(host_name(h) for h in allowed_host or ())
    except InputError as exc:
        raise UserError(str(exc)) from None
    if tenant_capacity is not None and not 1 <= tenant_capacity <= capacity:
        raise UserError(f"--tenant-capacity must be from 1 to --capacity ({capacity})")
    if not keys and not is_loopback_host(host):
        raise UserError(f"refusing to serve on {host} without an API key; pass --api-key")
    if traces not in ("none", "console", "otlp"):
        raise UserError(f"unknown trace exporter {traces!r}; use none, console or otlp")
    if no_api and not queue:
        raise UserError("--no-api runs workers for a shared queue; give --queue redis://…")
    exporter: ExporterKind = traces  # type: ignore[assignment]
    cfg = ServeConfig(
        workspace=workspace,
        queue=queue,
        workers=workers,
        capacity=capacity,
        tenant_capacity=tenant_capacity,
        tenant_keys=keys,
        metrics_key=metrics_key,
        report_ttl_s=report_ttl_hours * 3600,
        max_upload_bytes=max_upload_mb << 20,
        body_timeout_s=body_timeout_s,
        body_deadline_s=body_deadline_s,
        allowed_hosts=allowed_hosts,
        tracing=TracingConfig(exporter, otlp_endpoint, "fixbugs"),
        whole_bug=whole_bug,
    )
    models = None if no_model else models_from_config(config)
    app, service, telemetry = build_app(cfg, models=models)
    try:
        if no_api:
            shown = _shown(queue or "")  # --no-api has a queue (checked above)
            typer.echo(f"fixbugs workers: {_mode(cfg)}, {workers} slot(s) on {shown}")
            asyncio.run(service.run())
            return
        tenants = sorted(set(keys.values())) or ["(open, loopback only)"]
        typer.echo(
            f"fixbugs: dashboard and API on http://{host}:{port}/ "
            f"({_mode(cfg)}, {workers} worker(s), queue bound {capacity},"
            f" {service.tenant_capacity} per tenant;"
            f" tenants: {', '.join(tenants)})"
        )
        # the h11 protocol, pinned, with a timer on the header phase (header_timeout)
        http = header_timeout_h11(header_timeout_s)
        uvicorn.run(app, host=host, port=port, log_level="warning", http=http)
    finally:
        telemetry.shutdown()
