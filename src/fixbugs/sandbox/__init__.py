"""Contained execution in a disposable copy of the user's repository.

Every command of the repository runs through an :class:`Executor`;
:class:`Sandbox` is the product's: a temporary
copy of the repository on a size-limited filesystem, a subprocess that sees
only its copy, the system directories and the directories its interpreter
needs, as a capability-less uid, in a cgroup bounding the whole command's
memory, processes and CPU, with no network but its own loopback, and as an
ordinary user of an ordinary machine (a passwd entry and a home, a UTF-8
locale, UTC: :mod:`fixbugs.sandbox.identity`). What could not be enforced is
said in each result's ``notes``; so is any limit a command hit. Files a
command could have written are read back only with :func:`read_untrusted`.
"""

from fixbugs.sandbox.cgroups import CgroupSupport, detect_cgroups
from fixbugs.sandbox.containment import Mechanisms, View, probe
from fixbugs.sandbox.executor import Executor, Workspace, WorkspaceFactory
from fixbugs.sandbox.interpreters import interpreter_paths
from fixbugs.sandbox.limits import CommandResult, LimitHit, Limits, classify_limit, limit_note
from fixbugs.sandbox.output import CappedOutput
from fixbugs.sandbox.patching import PatchResult
from fixbugs.sandbox.untrusted import UntrustedFile, read_untrusted, read_untrusted_sync
from fixbugs.sandbox.workspace import DEFAULT_DISK_MB, Sandbox

__all__ = [
    "DEFAULT_DISK_MB",
    "CappedOutput",
    "CgroupSupport",
    "CommandResult",
    "Executor",
    "LimitHit",
    "Limits",
    "Mechanisms",
    "PatchResult",
    "Sandbox",
    "UntrustedFile",
    "View",
    "Workspace",
    "WorkspaceFactory",
    "classify_limit",
    "detect_cgroups",
    "interpreter_paths",
    "limit_note",
    "probe",
    "read_untrusted",
    "read_untrusted_sync",
]
