"""FixBugs as a service: HTTP API, server-sent progress, dashboard, workers.

``fixbugs serve`` wires it all (:func:`build_app`); tests and benchmarks
build a :class:`JobService` with a stand-in investigator and call
:func:`create_app` on it.
"""

from fixbugs.queued.spec import BugSpec
from fixbugs.service.admission import Admitted, Rejected, RunTimes, admit
from fixbugs.service.app import create_app
from fixbugs.service.auth import ApiKeys
from fixbugs.service.event_hub import EventHub
from fixbugs.service.investigate import agent_investigator
from fixbugs.service.job_files import Limits, TooLarge, UnsafePath, Workspace, safe_relpath
from fixbugs.service.jobs import STAGE, Investigator, JobService, JobStatus, QueueFull
from fixbugs.service.serve import ServeConfig, build_app, serve_command
from fixbugs.service.telemetry import ServiceTelemetry, stage_spans

__all__ = [
    "STAGE",
    "Admitted",
    "ApiKeys",
    "BugSpec",
    "EventHub",
    "Investigator",
    "JobService",
    "JobStatus",
    "Limits",
    "QueueFull",
    "Rejected",
    "RunTimes",
    "ServeConfig",
    "ServiceTelemetry",
    "TooLarge",
    "UnsafePath",
    "Workspace",
    "admit",
    "agent_investigator",
    "build_app",
    "create_app",
    "safe_relpath",
    "serve_command",
    "stage_spans",
]
