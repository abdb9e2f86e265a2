"""The images a report links: markdown ``![alt](path)`` and HTML ``<img src="path">``.

The report is hostile: whatever path it names, it names on the reader's
machine. So a linked image is read only when it is a plain relative path
below the report file's own folder: no URL (nothing is fetched at run time;
one line says which were not), no absolute path, no ``..`` component, and
no link on the way, which :func:`~fixbugs.inputs.screenshots.read_image`
enforces by opening each component without following links (``within`` the
report's folder). A path the report names outside its folder is left out
with one line, never opened. At most :data:`MAX_LINKED` images are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from fixbugs.inputs.inert import one_line

__all__ = ["MAX_LINKED", "LinkedImages", "linked_images"]

MAX_LINKED = 10
# bounded runs of characters that hold neither their delimiter nor the next match's start
# ("[", "<"): each match attempt reads no further than the next one's, so a report of
# 5 MB of "![" or "<img " is read in one pass
_MARKDOWN = re.compile(r"!\[[^\[\]\n]{0,1000}\]\(\s{0,10}<?(?P<src>[^)\s>]{1,4096})>?")
_HTML = re.compile(
    r"<img\b[^<>]{0,2000}?\bsrc\s{0,10}=\s{0,10}[\"'](?P<src>[^\"'\n]{1,4096})[\"']", re.I
)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]{0,30}:")


@dataclass(frozen=True, slots=True)
class LinkedImages:
    """Paths below the report's folder to read, and one line for each kind left out."""

    folder: Path
    paths: tuple[Path, ...]
    notes: tuple[str, ...]


def linked_images(text: str, report: Path) -> LinkedImages:
    """The images ``text`` (the report's, as written) links, checked as paths only."""
    folder = Path(report).absolute().parent
    refs = list(
        dict.fromkeys(m.group("src") for rx in (_MARKDOWN, _HTML) for m in rx.finditer(text))
    )
    urls: list[str] = []
    outside: list[str] = []
    paths: list[Path] = []
    for ref in refs:
        if _SCHEME.match(ref) or ref.startswith("//"):
            urls.append(ref)
            continue
        rel = PurePosixPath(unquote(ref.split("#", 1)[0].split("?", 1)[0]))
        if rel.is_absolute() or ".." in rel.parts or not rel.parts or "\x00" in str(rel):
            outside.append(ref)
            continue
        paths.append(folder.joinpath(*rel.parts))
    notes: list[str] = []
    if urls:
        notes.append(
            f"{len(urls)} image(s) linked in the report by URL, not fetched (no network at run "
            f"time): {_some(urls)}"
        )
    if outside:
        notes.append(
            f"{len(outside)} image(s) linked in the report outside its folder, not read: "
            f"{_some(outside)}"
        )
    if len(paths) > MAX_LINKED:
        notes.append(f"the report links {len(paths)} images; the first {MAX_LINKED} are read")
    return LinkedImages(folder, tuple(paths[:MAX_LINKED]), tuple(notes))


def _some(refs: list[str]) -> str:
    shown = ", ".join(one_line(r if len(r) <= 80 else r[:77] + "...") for r in refs[:3])
    return shown + (f" and {len(refs) - 3} more" if len(refs) > 3 else "")
