"""Which directories a Python interpreter needs to be visible in the sandbox.

The sandbox shows a command only the system directories and its own copy;
everything else (``/root``, ``/home``, the service workspace, other
sandboxes) is absent. A test interpreter usually lives elsewhere: a venv
under ``~/.cache`` whose ``bin/python`` is a symlink into a pyenv prefix
under ``/root/.pyenv``. :func:`interpreter_paths` names those directories,
so the caller can pass them to ``Sandbox.create(readonly_paths=...)``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["SYSTEM_DIRS", "interpreter_paths", "is_system_path"]

# Shown read-only in every sandbox (when present on the host).
SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def is_system_path(path: Path) -> bool:
    """``path`` is already visible because it lies under a system directory."""
    p = os.path.abspath(path)
    return any(p == d or p.startswith(d + "/") for d in SYSTEM_DIRS)


def _venv_home(venv: Path) -> Path | None:
    cfg = venv / "pyvenv.cfg"
    try:
        lines = cfg.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key.strip() == "home" and value.strip():
            return Path(value.strip())
    return None


def interpreter_paths(python: Path) -> tuple[Path, ...]:
    """Directories to bind read-only so ``python`` runs in the sandbox.

    The venv (if ``python`` is in one), the base prefix its ``pyvenv.cfg``
    names, and the prefix of the resolved executable. Paths under the system
    directories are left out (they are visible anyway).
    """
    exe = Path(os.path.abspath(python))
    found: list[Path] = []
    venv = exe.parent.parent
    if (venv / "pyvenv.cfg").is_file():
        found.append(venv)
        home = _venv_home(venv)
        if home is not None:
            found.append(Path(os.path.realpath(home)).parent)
    real = Path(os.path.realpath(exe))
    found.append(real.parent.parent)
    out: list[Path] = []
    for p in found:
        if p == Path("/") or is_system_path(p) or p in out:
            continue
        out.append(p)
    return tuple(out)
