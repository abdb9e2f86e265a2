"""Property-based API fuzzing from the OpenAPI spec: no input may cause a 5xx.

Runs the service with no workers (so submissions fill the queue and the
429 path is exercised too) on an in-memory queue, in-process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from svckit import ScriptedInvestigator, make_service  # noqa: E402

from fixbugs.service import ApiKeys, create_app  # noqa: E402


def _app(root: Path):
    service, telemetry = make_service(root, ScriptedInvestigator(), capacity=3)
    return create_app(
        service,
        keys=ApiKeys(),
        max_request_bytes=1 << 20,
        metrics=telemetry.exposition_for(service),
        run_workers=False,
    )


_ROOT = Path(__import__("tempfile").mkdtemp(prefix="fixbugs-schemathesis-"))
schema = schemathesis.openapi.from_asgi("/openapi.json", _app(_ROOT))


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case: schemathesis.Case) -> None:
    response = case.call()
    case.validate_response(response, checks=[not_a_server_error])


def _tenant_app(root: Path):
    service, telemetry = make_service(root, ScriptedInvestigator(), capacity=3)
    return create_app(
        service,
        keys=ApiKeys({"acme-key": "acme", "globex-key": "globex"}),
        max_request_bytes=1 << 20,
        metrics=telemetry.exposition_for(service),
        run_workers=False,
        metrics_key="metrics-key",
    )


tenant_schema = schemathesis.openapi.from_asgi(
    "/openapi.json",
    _tenant_app(Path(__import__("tempfile").mkdtemp(prefix="fixbugs-schemathesis-"))),
)


@tenant_schema.parametrize()
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors_with_tenant_keys(case: schemathesis.Case) -> None:
    response = case.call(headers={"X-API-Key": "acme-key"})
    case.validate_response(response, checks=[not_a_server_error])
