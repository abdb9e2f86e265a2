"""Who a sandboxed command runs as: the sandbox uid's passwd and group entries.

A test suite asks who it runs as (``getpass.getuser()``,
``pwd.getpwuid(os.getuid())``) and where its home is (``Path.home()``,
``os.path.expanduser("~")``). A uid without a passwd entry makes each of
these raise (``KeyError: 'getpwuid(): uid not found: …'``), and a test that
fails so has found the sandbox, not the bug. So the sandbox gives its uid an
entry, with the private home, and a group of the same id, in files of its
own that are bound over ``/etc/passwd`` and ``/etc/group`` in the command's
mount namespace only: the host's ``/etc`` is never written. The files hold
the host's entries (visible read-only in the sandbox anyway) less any of the
same name or id, then the sandbox's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["USER", "Identity", "write_identity"]

USER = "fixbugs"  # the name getpass.getuser() gives inside the sandbox
_SHELL = "/bin/sh"


@dataclass(frozen=True)
class Identity:
    """The sandbox uid as its commands see it: a user ``name`` with a ``home``."""

    uid: int
    home: Path
    passwd: Path  # the host-side files bound over /etc/passwd and /etc/group
    group: Path
    name: str = USER

    def binds(self) -> tuple[tuple[Path, Path], ...]:
        """(host file, path in the sandbox) pairs, bound read-only."""
        return ((self.passwd, Path("/etc/passwd")), (self.group, Path("/etc/group")))

    def environment(self) -> dict[str, str]:
        """The variables a login sets for this user (``HOME`` is the sandbox's own)."""
        return {"USER": self.name, "LOGNAME": self.name}


def write_identity(
    folder: Path, *, uid: int, home: Path, host_etc: Path = Path("/etc")
) -> Identity:
    """Write the passwd and group files for ``uid`` into ``folder`` (made here, 0755)."""
    folder.mkdir(mode=0o755)
    user = f"{USER}:x:{uid}:{uid}:FixBugs sandbox:{home}:{_SHELL}"
    group = f"{USER}:x:{uid}:"
    identity = Identity(uid, home, folder / "passwd", folder / "group")
    _write(identity.passwd, _others(host_etc / "passwd", uid), user)
    _write(identity.group, _others(host_etc / "group", uid), group)
    return identity


def _others(path: Path, uid: int) -> list[str]:
    """The host's entries that name neither the sandbox user nor its id."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    out: list[str] = []
    for line in lines:
        fields = line.split(":")
        if len(fields) < 3 or fields[0] == USER or fields[2] == str(uid):
            continue
        out.append(line)
    return out


def _write(path: Path, lines: list[str], own: str) -> None:
    path.write_text("\n".join([*lines, own]) + "\n")
    path.chmod(0o644)
