"""How the app's refusals read to a client: one line, no server path, no echo.

Every error body the app writes from an exception goes through here, the
one choke point where error text is made safe to hand to a hostile client:
its absolute server paths are rewritten (:class:`~.redact.PathRedactor`),
and a 422 names where and why the input is wrong but never the input
itself, since FastAPI's default handler echoes it whole (a 60 MB body with
an unknown field came back as a 60 MB 422). A queue store that cannot be
reached (Redis restarting) is a 503 with ``Retry-After``: the client's
request was fine and a retry will do, and the store's address stays on the
server. Last, any other exception is a one-line 500 naming its kind and
message (redacted), never the bare "Internal Server Error" or a traceback.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from agentrt.queues import QueueUnavailable
from fixbugs.errors import InputError
from fixbugs.service.job_files import TooLarge
from fixbugs.service.job_status import QueueFull
from fixbugs.service.redact import PathRedactor

__all__ = ["install_answers"]

_UNAVAILABLE_RETRY_S = 5  # a Redis restart with AOF takes seconds
_SHOWN = 200  # longest piece of a refused request a 422 repeats (a field's name, say)
_MAX_ERRORS = 20


def install_answers(app: FastAPI, redact: PathRedactor) -> None:
    """Register the handlers that turn the service's exceptions into answers."""

    @app.exception_handler(QueueFull)
    async def _full(_: Request, exc: QueueFull) -> JSONResponse:
        return JSONResponse(
            {"detail": redact(str(exc))},
            status_code=429,
            headers={"Retry-After": str(exc.retry_after_s)},
        )

    @app.exception_handler(TooLarge)
    async def _large(_: Request, exc: TooLarge) -> JSONResponse:
        return JSONResponse({"detail": redact(str(exc))}, status_code=413)

    @app.exception_handler(InputError)
    async def _bad(_: Request, exc: InputError) -> JSONResponse:
        return JSONResponse({"detail": redact(str(exc))}, status_code=400)

    @app.exception_handler(QueueUnavailable)
    async def _unavailable(_: Request, exc: QueueUnavailable) -> JSONResponse:
        return JSONResponse(
            {"detail": "the job queue's store cannot be reached right now; try again shortly"},
            status_code=503,
            headers={"Retry-After": str(_UNAVAILABLE_RETRY_S)},
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {
                "type": str(e.get("type", "invalid"))[:_SHOWN],
                "loc": [p if isinstance(p, int) else str(p)[:_SHOWN] for p in e.get("loc", ())],
                "msg": str(e.get("msg", ""))[:_SHOWN],
            }
            for e in list(exc.errors())[:_MAX_ERRORS]
        ]
        return JSONResponse({"detail": errors}, status_code=422)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        reason = redact.reason(f"{type(exc).__name__}: {exc}")
        return JSONResponse({"detail": f"internal error: {reason}"}, status_code=500)
