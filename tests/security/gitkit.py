"""git for the tests themselves, to build and read repositories: none of this host's
configuration (system, global, the user's identity) in play, and with ``safe`` the
repository's own commands (hooks, fsmonitor) switched off on the command line, for the
tests that read a hostile repository back."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["git"]

_OFF = ("-c", "core.fsmonitor=false", "-c", f"core.hooksPath={os.devnull}")


def git(cwd: Path, *args: str, safe: bool = False) -> str:
    """Run ``git args`` in ``cwd`` (it must succeed); its output, stripped."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    argv = ["git", *(_OFF if safe else ()), *args]
    done = subprocess.run(argv, cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip()
