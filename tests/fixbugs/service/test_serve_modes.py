"""`fixbugs serve` runs the stage queues by default; `--whole-bug`, whole-bug jobs (issue 24)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from svckit import ScriptedInvestigator
from typer.testing import CliRunner

from fixbugs.cli import app as cli_app
from fixbugs.queued import QUEUE_STAGES
from fixbugs.service import serve
from fixbugs.service.jobs import STAGE
from fixbugs.service.serve import ServeConfig, build_app


def _stages(cfg: ServeConfig) -> tuple[str, ...]:
    _, service, telemetry = build_app(cfg, models=None, run_workers=False)
    telemetry.shutdown()
    return service.stage_names


def test_the_default_is_the_stage_queues_and_whole_bug_is_one_job(tmp_path: Path) -> None:
    assert _stages(ServeConfig(workspace=tmp_path / "a")) == QUEUE_STAGES
    assert _stages(ServeConfig(workspace=tmp_path / "b", whole_bug=True)) == (STAGE,)


def test_an_investigator_needs_the_whole_bug_mode(tmp_path: Path) -> None:
    # on the stage queues it would never run: refused rather than silently unused
    with pytest.raises(ValueError, match="whole_bug"):
        build_app(
            ServeConfig(workspace=tmp_path / "ws"), models=None, investigator=ScriptedInvestigator()
        )


class _Built(Exception):
    pass


@pytest.mark.parametrize(("flags", "whole_bug"), [([], False), (["--whole-bug"], True)])
def test_the_command_passes_its_mode_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], whole_bug: bool
) -> None:
    seen: list[ServeConfig] = []

    def built(cfg: ServeConfig, **_kw: object) -> None:
        seen.append(cfg)
        raise _Built  # stop before serving

    monkeypatch.setattr(serve, "build_app", built)
    args = ["serve", "--no-model", "--workspace", str(tmp_path / "ws"), *flags]
    result = CliRunner().invoke(cli_app, args)
    assert isinstance(result.exception, _Built), result.output
    assert [c.whole_bug for c in seen] == [whole_bug]


def test_the_removed_staged_flag_is_a_one_line_error(tmp_path: Path) -> None:
    cli = [sys.executable, "-c", "from fixbugs.cli import main; main()", "serve"]
    p = subprocess.run(
        [*cli, "--workspace", str(tmp_path / "ws"), "--staged"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode != 0
    assert p.stderr.strip() == f"error: --staged is gone: {serve._STAGED_GONE}"
    assert "--whole-bug" in p.stderr and not (tmp_path / "ws").exists()
