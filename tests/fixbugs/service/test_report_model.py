"""One report model: the API's OpenAPI, ``fixbugs schema`` and the eval all read ReportModel."""

from __future__ import annotations

import json

from svckit import Harness
from typer.testing import CliRunner

from fixbugs.cli import app as cli_app
from fixbugs.eval.full_agent import output_from_report
from fixbugs.run.report_schema import ReportModel, report_json_schema


async def test_the_report_route_answers_with_the_published_model(harness: Harness) -> None:
    spec = (await harness.client.get("/openapi.json")).json()
    ok = spec["paths"]["/v1/bugs/{bug_id}/report"]["get"]["responses"]["200"]
    ref = ok["content"]["application/json"]["schema"]["$ref"]
    assert ref == "#/components/schemas/ReportModel"
    published = spec["components"]["schemas"]["ReportModel"]
    # the same fields, the same required ones, as the schema `fixbugs schema` prints
    mine = report_json_schema()
    assert set(published["properties"]) == set(mine["properties"])
    assert set(published["required"]) == set(mine["required"])


def test_fixbugs_schema_prints_the_model() -> None:
    result = CliRunner().invoke(cli_app, ["schema"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == report_json_schema()


async def test_the_eval_reads_a_served_report_through_the_model(harness: Harness) -> None:
    r = await harness.client.post("/v1/bugs", json={"example": "invoice"})
    assert r.status_code == 202, r.text
    job = r.json()["id"]
    async with harness.client.stream("GET", f"/v1/bugs/{job}/events") as s:
        [ln async for ln in s.aiter_lines()]
    served = (await harness.client.get(f"/v1/bugs/{job}/report")).json()
    out = output_from_report(ReportModel.model_validate(served))
    assert out.stage_s and out.notes[-1] == "scripted"
