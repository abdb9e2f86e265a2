"""Contained execution in a disposable copy of the user's repository.

Every command the agent runs goes through :class:`Sandbox`: a temporary
copy of the repository, a subprocess with time, memory, process and output
limits, no network, and no write access outside the copy where the OS
allows it; what could not be enforced is said in each result's ``notes``.
"""

from fixbugs.sandbox.containment import Mechanisms, probe
from fixbugs.sandbox.interpreters import interpreter_paths
from fixbugs.sandbox.limits import CommandResult, LimitHit, Limits, classify_limit
from fixbugs.sandbox.output import CappedOutput
from fixbugs.sandbox.workspace import PatchResult, Sandbox

__all__ = [
    "CappedOutput",
    "CommandResult",
    "LimitHit",
    "Limits",
    "Mechanisms",
    "PatchResult",
    "Sandbox",
    "classify_limit",
    "interpreter_paths",
    "probe",
]
