"""The API's shapes: request and response models, and the errors each route documents.

They are the OpenAPI contract (schemathesis fuzzes the app from it), so a
change here is a change of the API: add, never rename or remove.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ERRORS",
    "JOB_ERRORS",
    "SUBMIT_ERRORS",
    "Accepted",
    "ErrorBody",
    "ExampleBug",
    "Status",
]


class ErrorBody(BaseModel):
    detail: str


class ExampleBug(BaseModel):
    """A bug from a bundled example (the JSON way to submit)."""

    model_config = ConfigDict(extra="forbid")
    example: Literal["invoice"]
    test: str | None = Field(default=None, max_length=2000)


class Accepted(BaseModel):
    id: str
    status_url: str
    events_url: str
    report_url: str


class Status(BaseModel):
    id: str
    title: str
    state: str
    attempts: int
    queued_at: float | None
    started_at: float | None
    finished_at: float | None
    error: str | None
    stages: dict[str, str]
    current_stage: str | None


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Invalid input or unsafe path"},
    401: {"model": ErrorBody, "description": "Missing or unknown API key"},
    403: {"model": ErrorBody, "description": "Without keys: a foreign Host or Origin"},
}
SUBMIT_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    408: {"model": ErrorBody, "description": "The body stalled or took too long"},
    413: {"model": ErrorBody, "description": "Upload over the limits"},
    429: {"model": ErrorBody, "description": "Queue full; see Retry-After"},
}
JOB_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    404: {"model": ErrorBody, "description": "No such bug"},
}
