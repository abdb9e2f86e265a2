"""A case's ``repo.tar.gz`` extracted as the repository root, one way for the eval and the scorer.

Cases come in two layouts: the dev sets put the tree's files at the top of
the archive; others (the SWE-bench pool) wrap the whole tree in one folder
(``repo/…``). Paths in ``gold.json`` are relative to the repository root in
both, so a lone top-level folder that holds every member is stripped: the
agent, its baselines and the scorer then all see ``sympy/core/basic.py``,
never ``repo/sympy/core/basic.py``. A real tree always has more than one
entry at its root (a README, a setup file, the package), so nothing else is
ever stripped.

The archive's headers are checked first (:func:`fixbugs.inputs.archives.check_tar`:
a long-name or pax header over 64 KiB would be read whole by ``tarfile``), and
members go through the tar ``data`` filter (no absolute paths, no escapes, no
device files) before their names are shortened.
"""

from __future__ import annotations

import tarfile
from collections.abc import Sequence
from pathlib import Path

from fixbugs.inputs.archives import CASE_LIMITS, check_tar

__all__ = ["extract_tree"]


def _name(member: tarfile.TarInfo) -> str:
    return member.name.removeprefix("./").rstrip("/")


def _wrapper_folder(members: Sequence[tarfile.TarInfo]) -> str | None:
    """The one top-level folder that holds every member, or None."""
    names = [n for n in map(_name, members) if n and n != "."]
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) != 1:
        return None
    (top,) = tops
    inside = all(n == top or n.startswith(top + "/") for n in names)
    is_dir = any(_name(m) == top and m.isdir() for m in members) or any("/" in n for n in names)
    return top if inside and is_dir and any(n != top for n in names) else None


def extract_tree(archive: Path, dest: Path, *, only: Sequence[str] | None = None) -> None:
    """Extract ``archive`` into ``dest`` as the repository root (``only``: just these
    root-relative paths)."""
    wanted = None if only is None else {p.strip().removeprefix("./") for p in only}
    with archive.open("rb") as f, tarfile.open(fileobj=f, mode=check_tar(f, CASE_LIMITS)) as tar:
        members = tar.getmembers()
        top = _wrapper_folder(members)
        keep: list[tarfile.TarInfo] = []
        for m in members:
            name = _name(m)
            if top is not None:
                if name == top:
                    continue
                name = name.removeprefix(top + "/")
            if wanted is not None and name not in wanted:
                continue
            if top is None:
                keep.append(m)
                continue
            link = m.linkname
            if m.islnk():  # a hard link names another member
                link = link.removeprefix("./").removeprefix(top + "/")
            keep.append(m.replace(name=name, linkname=link, deep=False))
        tar.extractall(dest, members=keep, filter="data")
