"""A model endpoint that cannot serve the run: one line and exit 2 before any work;
an outage during the run: the run finishes on static evidence, degraded, exit 3.

Endpoints are the in-process simulator (behind small ASGI wrappers for the
401 and the outage) and a closed port.
"""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.responses import JSONResponse

import fixbugs.run.agent
import fixbugs.run.preflight
from agentrt.llm import OpenAIModel
from agentrt.metrics import CallRecord
from agentrt.sim import StreamingASGITransport, create_app, get_profile
from fixbugs.cli import main
from fixbugs.examples import example_dir
from fixbugs.run.context import Models
from fixbugs.run.preflight import model_failures


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(tmp_path: Path, base_url: str, model: str = "sim-model") -> Path:
    cfg = tmp_path / "agentrt.toml"
    cfg.write_text(
        f'[endpoints.remote]\nkind = "openai"\nbase_url = "{base_url}"\nmodel = "{model}"\n'
        'api_key = "k"\n\n[roles]\ndefault = "remote"\n'
    )
    return cfg


def _sim_app() -> Any:
    # virtual latency of zero on the simulator's own (scaled) clock: nothing waits
    prof = get_profile("default").model_copy(
        update={"ttft_base_s": 0.0, "decode_tps": 1e6, "time_scale": 1000.0}
    )
    return create_app(prof)


def _needs_key(inner: Any, key: str) -> Any:
    """The simulator behind a bearer-key check, as a hosted endpoint is."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {key}".encode():
            body = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
            await JSONResponse(body, status_code=401)(scope, receive, send)
            return
        await inner(scope, receive, send)

    return app


def _outage_after(inner: Any, served: int) -> Any:
    """The simulator serving ``served`` requests, then answering 503 to every one."""
    count = {"n": 0}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].endswith("/chat/completions"):
            count["n"] += 1
            if count["n"] > served:
                body = {"error": {"message": "service unavailable", "type": "server_error"}}
                await JSONResponse(body, status_code=503)(scope, receive, send)
                return
        await inner(scope, receive, send)

    return app


def _client_on(app: Any, model: str) -> OpenAIModel:
    http = httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://sim")
    return OpenAIModel(model=model, base_url="http://sim/v1", api_key="k", http_client=http)


def _run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return int(exc.value.code or 0), capsys.readouterr().err


@pytest.fixture
def example(tmp_path: Path) -> Path:
    dst = tmp_path / "invoice"
    shutil.copytree(example_dir("invoice"), dst)
    return dst


def _run_args(example: Path, cfg: Path) -> list[str]:
    return [
        "run",
        "--report",
        str(example / "report.md"),
        "--repo",
        str(example / "repo"),
        "--config",
        str(cfg),
    ]


def test_unreachable_endpoint_is_one_line_and_exit_2(tmp_path, example, capsys, monkeypatch):
    called: list[str] = []
    monkeypatch.setattr(fixbugs.run.agent, "user_env", lambda *a, **k: called.append("env"))
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    code, err = _run_cli(_run_args(example, _config(tmp_path, url)), capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "'remote'" in lines[0] and "unreachable" in lines[0]
    assert url in lines[0] and "Traceback" not in err
    assert called == []  # no work before the check


@pytest.mark.parametrize(
    ("app", "model", "problem"),
    [
        (lambda: _needs_key(_sim_app(), "right-key"), "sim-model", "credentials refused (401)"),
        (_sim_app, "no-such-model", "unknown model"),
    ],
)
def test_refused_credentials_and_unknown_model(
    tmp_path, example, capsys, monkeypatch, app, model, problem
):
    served = app()
    monkeypatch.setattr(
        fixbugs.run.preflight,
        "make_client",
        lambda cfg, name: _client_on(served, cfg.model),
    )
    code, err = _run_cli(_run_args(example, _config(tmp_path, "http://sim/v1", model)), capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and problem in lines[0] and "'remote'" in lines[0]


async def test_preflight_passes_a_serving_endpoint():
    app = _sim_app()
    await fixbugs.run.preflight.check_client(_client_on(app, "sim-model"), "sim")


pytestmark_root = pytest.mark.needs_root


@pytestmark_root
def test_outage_mid_run_is_degraded_and_exit_3(tmp_path, example, capsys, monkeypatch):
    app = _outage_after(_sim_app(), served=1)  # the preflight's request, then nothing
    monkeypatch.setattr(
        fixbugs.run.preflight, "make_client", lambda cfg, name: _client_on(app, cfg.model)
    )

    def models(config: Path | None, env: object = None, *, settings: object = None) -> Models:
        client = _client_on(app, "sim-model")
        # a configured OpenAI-compatible endpoint: trusted high, so every model step runs
        return Models(map=client, judge=client, judge_trust="high", map_trust="high")

    monkeypatch.setattr(fixbugs.run.agent, "models_from_config", models)
    out = tmp_path / "report.json"
    argv = [*_run_args(example, _config(tmp_path, "http://sim/v1")), "--json", str(out)]
    argv += ["--python", shutil.which("python3") or "/usr/bin/python3"]
    code, err = _run_cli(argv, capsys)
    assert code == 3
    data = json.loads(out.read_text())
    assert data["degraded"] is True
    failed, total = data["model_calls"]["failed"], data["model_calls"]["total"]
    assert failed >= 1 and failed <= total
    assert data["verdict_head"] == f"model unavailable: {failed} of {total} calls failed"
    assert f"model unavailable: {failed} of {total} calls failed" in err
    assert data["ranked_files"], "the run still ranks files on static evidence"


def test_failures_count_unavailability_not_bad_answers():
    def rec(outcome: str, error: str | None = None, stage: str = "root_cause") -> CallRecord:
        return CallRecord(stage, "model", "m", 0.0, 0.1, outcome=outcome, error=error)  # type: ignore[arg-type]

    records = [
        rec("ok"),
        rec("error", "ProviderError: 503"),
        rec("error", "StructuredOutputError: not JSON"),
        rec("ok", stage="preflight"),
        CallRecord("fix", "tool", "pytest", 0.0, 1.0, outcome="error"),
    ]
    f = model_failures(records)
    assert (f.failed, f.total, f.degraded) == (1, 3, True)
    assert f.line() == "model unavailable: 1 of 3 calls failed"
    assert not model_failures([rec("ok")]).degraded
