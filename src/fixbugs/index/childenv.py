"""The environment of the child interpreters FixBugs starts to run its own modules.

The index's parse workers and ``fixbugs bench scale``'s measured runs are
``python -m fixbugs...`` processes: they get the host tools' environment
(no API key, no caller's ``GIT_*``) and this FixBugs on their path.

They run on the host, so nothing of the repository may reach their imports:
``python -m`` puts the working folder first on ``sys.path``, and a user runs
FixBugs from inside the repository (a ``json.py`` there would run on import).
So they start with ``-P`` (no such entry) in a folder of no one's (``/``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import fixbugs
from fixbugs.sandbox.hosttools import ToolRun, run_tool

__all__ = ["own_python_env", "run_own_module"]


def own_python_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child interpreter that runs FixBugs' own modules: the host
    tools' (:func:`~fixbugs.sandbox.hosttools.host_env`), with this FixBugs importable."""
    from fixbugs.sandbox.hosttools import host_env

    here = str(Path(fixbugs.__file__).resolve().parents[1])  # the folder holding fixbugs
    # the caller's own path after it (a development checkout's agentrt, say)
    path = os.pathsep.join([here, *filter(None, [os.environ.get("PYTHONPATH")])])
    return host_env({"PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1", **(extra or {})})


def run_own_module(
    module: str,
    args: Sequence[str] = (),
    *,
    timeout_s: float,
    stdin: bytes | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> ToolRun:
    """``python -P -m module args`` of FixBugs' own interpreter, from ``/`` (see above)."""
    return run_tool(
        [sys.executable, "-P", "-m", module, *args],
        env=own_python_env(extra_env),
        cwd="/",
        stdin=stdin,
        timeout_s=timeout_s,
    )
