"""FixBugs' own programs on the host: one runner, no shell, a small environment, a timeout.

What runs here is never the repository's code (that runs only through an
:class:`~fixbugs.sandbox.executor.Executor`): git with none of the
repository's configuration (:mod:`fixbugs.inputs.hostgit`, the sandbox's
snapshots), ``mount``/``umount`` for the sandbox's tmpfs, probes of the
user's interpreter and the venv and pip
set-up of the environments FixBugs makes (:mod:`fixbugs.pyenv`), and
``fixbugs run`` itself in the eval. The OCR engine is not one of them: it
decodes a stranger's image, so it runs in the sandbox (:mod:`fixbugs.inputs.ocr`).

:func:`run_tool` takes an argv (no shell), runs it with the environment
given (default :func:`host_env`, a short allow-list of the caller's, never
the whole of it), kills it at its timeout and never raises for how it
ended: a program that cannot start, exits non-zero or runs out of time is
said in its :class:`ToolRun`. :func:`stream_tool` is the same for a tool
whose output is read as it comes (``git cat-file --batch``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = ["NOT_STARTED", "ToolRun", "git_env", "host_env", "run_tool", "stream_tool"]

NOT_STARTED = 127  # a shell's "command not found": the program did not start
_KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")
# what pip and venv need to reach a package index through a proxy or a mirror
_KEPT_PREFIXES = ("PIP_",)
_KEPT_PROXY = ("http_proxy", "https_proxy", "no_proxy", "all_proxy")


@dataclass(frozen=True, slots=True)
class ToolRun:
    """How one host tool ended; ``returncode`` is negative for a signal."""

    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")

    def said(self) -> str:
        """What it printed (stderr first), stripped: for one-line errors."""
        return (self.stderr + self.stdout).decode("utf-8", errors="replace").strip()


def host_env(
    extra: Mapping[str, str] | None = None,
    *,
    keep: tuple[str, ...] = (),
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A tool's environment: PATH, HOME, the locale, TZ, TMPDIR, pip's and proxy settings.

    Nothing else of ``environ`` (default: this process's) is passed on: no
    API key, no ``GIT_*`` setting of the caller's shell; ``keep`` names more
    prefixes to pass (the interpreter probe keeps ``PYENV_``, for a shim).
    """
    src = os.environ if environ is None else environ
    prefixes = (*_KEPT_PREFIXES, *keep)
    out = {
        k: v
        for k, v in src.items()
        if k in _KEPT or k.startswith(prefixes) or k.lower() in _KEPT_PROXY
    }
    out.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    out.update(extra or {})
    return out


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """:func:`host_env` for git: no system or global config, no prompt, no replace refs.

    The one git environment of FixBugs' own git runs (the export of a
    repository, ``--apply``, the sandbox's snapshots); none of them may read
    a configuration that a user's machine or a repository brings.
    """
    env = host_env()
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_ATTR_NOSYSTEM="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
    )
    env.update(extra or {})
    return env


def run_tool(
    argv: Sequence[str],
    *,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    stdin: bytes | None = None,
) -> ToolRun:
    """Run ``argv`` (no shell) and wait at most ``timeout_s``; stdin is ``stdin`` or nothing."""
    args = tuple(str(a) for a in argv)
    if not args:
        raise ValueError("empty command")
    try:
        done = subprocess.run(
            args,
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            cwd=cwd,
            env=dict(host_env() if env is None else env),
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        said = f"{args[0]}: gave up after {timeout_s:g} s".encode()
        return ToolRun(args, -9, _bytes(exc.stdout), _bytes(exc.stderr) + said, timed_out=True)
    except OSError as exc:
        return ToolRun(args, NOT_STARTED, b"", str(exc).encode())
    return ToolRun(args, done.returncode, done.stdout, done.stderr)


@contextlib.contextmanager
def stream_tool(
    argv: Sequence[str],
    *,
    stdin: IO[bytes],
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
) -> Iterator[IO[bytes]]:
    """Run ``argv`` (no shell) reading ``stdin``; yield its stdout; kill it on leaving.

    The caller bounds the reading (a byte budget); the tool does not outlive
    the ``with`` block, whatever happens in it. stderr is discarded.
    """
    proc = subprocess.Popen(
        [str(a) for a in argv],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=dict(host_env() if env is None else env),
    )
    try:
        assert proc.stdout is not None  # invariant: stdout=PIPE
        yield proc.stdout
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _bytes(data: bytes | str | None) -> bytes:
    if data is None:
        return b""
    return data.encode() if isinstance(data, str) else data
