"""The HTTP API and the dashboard, one FastAPI app over a :class:`JobService`.

Errors are answers, never tracebacks: bad input is 400 with a one-line
``detail``, an unsafe path 400, a too-large upload 413, a missing or wrong
key 401, a full queue 429 with ``Retry-After``, a stalled body 408, and on a
server without keys a foreign ``Host`` or ``Origin`` 403. Error text names no
absolute path of the server (:class:`~.redact.PathRedactor`), and a 422
never echoes the input it refuses.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from importlib.resources import files
from typing import Annotated, Any

from fastapi import Depends, FastAPI, File, Form, Header, HTTPException, Request, UploadFile
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles

from fixbugs.errors import InputError
from fixbugs.queued.spec import BugSpec
from fixbugs.run.report_schema import ReportModel
from fixbugs.service.answers import install_answers
from fixbugs.service.api_models import (
    ERRORS,
    JOB_ERRORS,
    SUBMIT_ERRORS,
    Accepted,
    ErrorBody,
    ExampleBug,
    Status,
)
from fixbugs.service.auth import ApiKeys
from fixbugs.service.body_limits import BodyBounds, BodyLimit
from fixbugs.service.event_hub import resume_after
from fixbugs.service.jobs import JobService, JobStatus
from fixbugs.service.redact import PathRedactor
from fixbugs.service.same_origin import SameOrigin

__all__ = ["EXAMPLES", "create_app"]

EXAMPLES = ("invoice",)
UPLOAD_PATHS = frozenset({"/v1/bugs/upload"})  # the only routes that take a large body
MetricsExposition = Callable[[], Awaitable[tuple[bytes, str]]]


def _tenant(request: Request, *, allow_query: bool) -> str:
    keys: ApiKeys = request.app.state.api_keys
    key = keys.presented(request.headers, request.query_params, allow_query=allow_query)
    tenant = keys.tenant(key)
    if tenant is None:
        raise HTTPException(401, "missing or unknown API key; send X-API-Key")
    return tenant


def tenant_of(request: Request) -> str:
    """The caller's tenant, from a header key (never the query string)."""
    return _tenant(request, allow_query=False)


def tenant_of_stream(request: Request) -> str:
    """As :func:`tenant_of`, or ``?key=``: EventSource cannot set headers."""
    return _tenant(request, allow_query=True)


Tenant = Annotated[str, Depends(tenant_of)]
StreamTenant = Annotated[str, Depends(tenant_of_stream)]


def _accepted(job: str) -> Accepted:
    base = f"/v1/bugs/{job}"
    return Accepted(
        id=job, status_url=base, events_url=f"{base}/events", report_url=f"{base}/report"
    )


def create_app(
    service: JobService,
    *,
    keys: ApiKeys | None = None,
    max_request_bytes: int = 64 << 20,
    metrics: MetricsExposition | None = None,
    run_workers: bool = True,
    heartbeat_s: float = 15.0,
    metrics_key: str | None = None,
    max_json_bytes: int = 64 << 10,
    body_timeout_s: float = 30.0,
    body_deadline_s: float = 600.0,
    allowed_hosts: Sequence[str] = (),
) -> FastAPI:
    """The app; with ``run_workers`` its lifespan serves the service's workers.

    Every bug belongs to the tenant of the key that submitted it, and only
    that tenant's keys see it: another tenant's id answers 404, exactly like
    an id that does not exist. ``metrics_key``, when given, is required for
    ``/metrics``. A body is at most ``max_request_bytes`` on the upload
    route and ``max_json_bytes`` elsewhere, and is cut (408) when no byte
    came for ``body_timeout_s`` or it is incomplete after ``body_deadline_s``,
    on the service's clock. Without keys, only this server's own names
    (plus ``allowed_hosts``) and origin are answered.
    """
    keys = keys or ApiKeys()
    redact = PathRedactor(service.workspace.root)

    def public(st: JobStatus) -> Status:
        """A status as clients see it: a failed run's error names no server path."""
        shown = Status.model_validate(st.to_dict())
        if st.error is None:
            return shown
        return shown.model_copy(update={"error": redact.reason(st.error)})

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if not run_workers:
            yield
            return
        async with asyncio.TaskGroup() as tg:
            workers = tg.create_task(service.run(), name="fixbugs-workers")
            yield
            workers.cancel()

    app = FastAPI(
        title="FixBugs",
        version="1",
        summary="Submit bugs, watch investigations live, read reports.",
        lifespan=lifespan,
    )

    app.state.api_keys = keys

    install_answers(app, redact)

    async def _job_or_404(job: str, tenant: str) -> JobStatus:
        st = await service.status(job, tenant) if _plausible_id(job) else None
        if st is None:
            raise HTTPException(404, f"no bug {job!r}")
        return st

    # -- API ----------------------------------------------------------------
    @app.post(
        "/v1/bugs",
        status_code=202,
        response_model=Accepted,
        responses=SUBMIT_ERRORS,
        tags=["bugs"],
    )
    async def submit_example(bug: ExampleBug, tenant: Tenant) -> Accepted:
        """Submit a bundled example bug (JSON)."""
        from fixbugs.examples import example_dir
        from fixbugs.inputs import load_report

        await service.check_room(tenant)
        base = example_dir(bug.example)
        title = load_report(base / "report.md").title
        spec = BugSpec(
            title=title,
            report=base / "report.md",
            repo=base / "repo",
            logs=tuple(sorted((base / "logs").glob("*"))),
            traces=tuple(sorted((base / "traces").glob("*"))),
            test=bug.test,
        )
        job = service.new_id()
        service.workspace.create(job)
        try:
            await service.enqueue(job, spec, tenant=tenant)
        except BaseException:
            service.workspace.remove(job)
            raise
        return _accepted(job)

    @app.post(
        "/v1/bugs/upload",
        status_code=202,
        response_model=Accepted,
        responses=SUBMIT_ERRORS,
        tags=["bugs"],
    )
    async def submit_upload(
        tenant: Tenant,
        report: Annotated[
            UploadFile, File(description="Bug report: markdown, text or GitHub issue JSON")
        ],
        repo: Annotated[
            UploadFile, File(description="Repository archive: .tar.gz, .tgz, .tar or .zip")
        ],
        logs: Annotated[list[UploadFile] | None, File(description="Log files")] = None,
        traces: Annotated[list[UploadFile] | None, File(description="OTLP JSON traces")] = None,
        test: Annotated[
            str | None, Form(max_length=2000, description="A command that fails")
        ] = None,
    ) -> Accepted:
        """Submit a bug with its artifacts (multipart)."""
        from fixbugs.inputs import load_report, load_traces

        await service.check_room(tenant)
        job = service.new_id()
        ws = service.workspace
        d = ws.create(job)
        try:

            def save_all() -> BugSpec:
                rep = ws.save(job, "input", report.filename or "report.md", report.file)
                root = ws.unpack(job, repo.filename or "repo.tar.gz", repo.file)
                log_paths = tuple(
                    ws.save(job, "logs", f.filename or f"log{i}.log", f.file)
                    for i, f in enumerate(logs or ())
                )
                trace_paths = tuple(
                    ws.save(job, "traces", f.filename or f"trace{i}.json", f.file)
                    for i, f in enumerate(traces or ())
                )
                title = load_report(rep).title
                for t in trace_paths:  # parsed within bounds here: a hostile one is a 400
                    load_traces(t)
                return BugSpec(
                    title=title,
                    report=rep,
                    repo=root,
                    logs=log_paths,
                    traces=trace_paths,
                    test=test or None,
                )

            spec = await asyncio.to_thread(save_all)
            if not d.exists():  # pragma: no cover - defensive
                raise InputError("the job's directory vanished")
            await service.enqueue(job, spec, tenant=tenant)
        except BaseException:
            ws.remove(job)
            raise
        return _accepted(job)

    @app.get(
        "/v1/bugs",
        response_model=list[Status],
        responses=ERRORS,
        tags=["bugs"],
    )
    async def list_bugs(tenant: Tenant) -> list[Status]:
        """Your latest bugs, newest first."""
        return [public(s) for s in await service.list(tenant=tenant)]

    @app.get(
        "/v1/bugs/{bug_id}",
        response_model=Status,
        responses=JOB_ERRORS,
        tags=["bugs"],
    )
    async def bug_status(bug_id: str, tenant: Tenant) -> Status:
        """Where a bug stands: queued, running (which stage), done, failed."""
        return public(await _job_or_404(bug_id, tenant))

    @app.get(
        "/v1/bugs/{bug_id}/report",
        response_model=ReportModel,
        responses={**JOB_ERRORS, 409: {"model": ErrorBody, "description": "Not finished yet"}},
        tags=["bugs"],
    )
    async def bug_report(bug_id: str, tenant: Tenant) -> JSONResponse:
        """The JSON report of a finished investigation (the schema ``fixbugs schema`` prints)."""
        st = await _job_or_404(bug_id, tenant)
        report = await service.report(bug_id, tenant)
        if report is None:
            raise HTTPException(409, f"bug {bug_id!r} is {st.state}; no report yet")
        # the run built it (fixbugs.run.report.build_report); recorded and sent as its JSON
        return JSONResponse(report.model_dump(mode="json"))

    @app.get(
        "/v1/bugs/{bug_id}/events",
        responses={
            **JOB_ERRORS,
            200: {
                "content": {"text/event-stream": {}},
                "description": "Server-sent progress events",
            },
        },
        tags=["bugs"],
        response_class=StreamingResponse,
    )
    async def bug_events(
        bug_id: str,
        tenant: StreamTenant,
        last_event_id: Annotated[
            str | None,
            Header(alias="Last-Event-ID", description="Resume after this event number"),
        ] = None,
    ) -> StreamingResponse:
        """Progress as server-sent events; resumes after ``Last-Event-ID``.

        The key may come as ``?key=`` here (and nowhere else): the browser's
        EventSource cannot send headers.
        """
        await _job_or_404(bug_id, tenant)
        after = resume_after(last_event_id)  # InputError: a 400
        return StreamingResponse(
            _sse(bug_id, after),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _sse(job: str, after: int) -> AsyncIterator[str]:
        await service.events.follow(job)  # a job submitted before this process started
        if service.hub.log(job) is not None:
            async for item in service.hub.follow(job, after, heartbeat_s=heartbeat_s):
                if item is None:
                    yield ": keep-alive\n\n"
                    continue
                seq, ev = item
                if ev.get("kind") == "failed" and isinstance(ev.get("message"), str):
                    ev = {**ev, "message": redact.reason(ev["message"])}
                yield f"id: {seq}\nevent: {ev.get('kind', 'note')}\ndata: {json.dumps(ev)}\n\n"
        # the report is recorded just after the last event: wait for the state
        while True:
            st = await service.status(job)
            if st is None or st.state in ("done", "dead"):
                break
            if st.state == "failed" and service.hub.log(job) is None:
                break
            yield f"event: status\ndata: {json.dumps(public(st).model_dump())}\n\n"
            await service.backend.wait(1.0)
        state = st.state if st else "unknown"
        yield f"event: end\ndata: {json.dumps({'state': state})}\n\n"

    @app.get("/v1/pipeline", responses=ERRORS, tags=["service"])
    async def pipeline(_: Tenant) -> dict[str, Any]:
        """Queue depth, workers, sessions, limiter limits and retry budget, now."""
        return (await service.snapshot()).to_dict()

    @app.get("/healthz", tags=["service"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    if metrics is not None:
        expose = metrics

        @app.get(
            "/metrics",
            tags=["service"],
            response_class=Response,
            responses={200: {"content": {"text/plain": {}}}},
        )
        async def prometheus(request: Request) -> Response:
            """Prometheus exposition: stage latencies, queue depth, limits, retry budget."""
            if metrics_key is not None:
                given = keys.presented(request.headers, {}) or ""
                if not hmac.compare_digest(given.encode(), metrics_key.encode()):
                    raise HTTPException(401, "/metrics needs the metrics key; send X-API-Key")
            body, ctype = await expose()
            return Response(body, media_type=ctype)

    # -- dashboard ----------------------------------------------------------
    static = files("fixbugs.service") / "dashboard"

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(str(static / "index.html"))

    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    bounds = BodyBounds(
        max_bytes=max_request_bytes,
        max_small_bytes=max_json_bytes,
        idle_s=body_timeout_s,
        total_s=body_deadline_s,
        large_paths=UPLOAD_PATHS,
    )
    app.add_middleware(BodyLimit, bounds=bounds, clock=service.clock)
    if keys.open:  # outermost: a foreign page's request is refused before its body is read
        app.add_middleware(SameOrigin, allowed_hosts=allowed_hosts)
    return app


def _plausible_id(job: str) -> bool:
    return 0 < len(job) <= 64 and job.isalnum()
