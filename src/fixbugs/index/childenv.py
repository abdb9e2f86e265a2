"""The environment of the child interpreters FixBugs starts to run its own modules.

The index's parse workers and ``fixbugs bench scale``'s measured runs are
``python -m fixbugs...`` processes: they get the host tools' environment
(no API key, no caller's ``GIT_*``) and this FixBugs on their path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import fixbugs

__all__ = ["own_python_env"]


def own_python_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child interpreter that runs FixBugs' own modules: the host
    tools' (:func:`~fixbugs.sandbox.hosttools.host_env`), with this FixBugs importable."""
    from fixbugs.sandbox.hosttools import host_env

    here = str(Path(fixbugs.__file__).resolve().parents[1])  # the folder holding fixbugs
    # the caller's own path after it (a development checkout's agentrt, say)
    path = os.pathsep.join([here, *filter(None, [os.environ.get("PYTHONPATH")])])
    return host_env({"PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1", **(extra or {})})
