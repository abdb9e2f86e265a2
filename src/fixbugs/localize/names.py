"""Names the report's text uses: ``Class.method``, dotted module paths, repository paths.

Issue writers point at code by name in their prose as often as in their
snippets: "the code for this is in ``Function._eval_evalf``", "see
``sympy.printing.latex``", "in ``sphinx/ext/napoleon/docstring.py``". Each
form is resolved to a definition:

* a dotted name that starts with a module (``pkg.mod.Class.meth``) goes
  through the module graph (:func:`fixbugs.index.dotted_target`);
* ``Class.member`` (``Class`` defined by at most :data:`MAX_CLASSES`
  classes) is the member that class, or a base of it, defines;
* a path that names a repository file (by its whole path, or a suffix of two
  parts or more) is that file.

FileEvidence kinds: ``name`` for the first two (lines: the function's span),
``path`` for the last. Only the report's own words are read: a name the
report's code binds is :mod:`fixbugs.localize.snippet_calls`'s business,
but writing ``Thing.method`` in prose counts here too.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection

from fixbugs.index import RepoIndex, Target, dotted_target, is_test_path, member
from fixbugs.inputs import pieces as bounded
from fixbugs.localize.evidence import FileEvidence
from fixbugs.localize.snippet_calls import Use, uses_evidence
from fixbugs.localize.traceback import relativize

__all__ = ["MAX_CLASSES", "name_evidence", "path_evidence"]

MAX_CLASSES = 3  # ``Class.member`` where more classes share the name points nowhere
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w])")
_PATH = re.compile(r"(?<![\w/.~-])((?:~?[/\\]|[A-Za-z]:[/\\])?(?:[\w.-]+[/\\])+[\w-]+\.pyx?)\b")
# a code host's link to a file at a commit or branch, maybe to its lines:
# https://github.com/o/r/blob/<ref>/pkg/mod.py#L12-L14 (GitLab: /-/blob/, #L12-14);
# read by :func:`_links`, in one pass (a pattern with a lazy middle and a greedy path
# is cubic on a run of ``https://h/blob/x/``)
_RUN = re.compile(r"[^\s#]+")
_SCHEME = re.compile(r"https?://")
_BLOB = re.compile(r"(?=/blob/)")
_SLASH = re.compile("/")
_STOP = re.compile(r"[)>\]]")
_PY = re.compile(r"\.py")
_LINES = re.compile(r"#L(?P<a>\d{1,9})(?:-L?(?P<b>\d{1,9}))?")
_SKIP_HEADS = frozenset({"self", "cls", "np", "numpy", "os", "sys", "re", "e", "i", "www"})


def _dotted_uses(index: RepoIndex, dotted: str) -> list[Use]:
    parts = dotted.split(".")
    if parts[0] in _SKIP_HEADS or len(parts) > 8:
        return []
    found = dotted_target(index, dotted)
    if found is not None:
        weight = 1.0 if found.symbol is not None else 0.6
        return [Use(found.path, found.symbol, weight, f"the report names {dotted}")]
    head = parts[0]
    classes = [
        s for s in index.symbols_named(head) if s.kind == "class" and not is_test_path(s.path)
    ]
    if not classes or len(classes) > MAX_CLASSES:
        return []
    out: list[Use] = []
    for cls in classes:
        target: Target | None = Target(cls.path, cls)
        for part in parts[1:]:
            target = member(index, target, part)
            if target is None:
                break
        if target is not None and target.symbol is not None:
            out.append(
                Use(target.path, target.symbol, 1.0 / len(classes), f"the report names {dotted}")
            )
        elif target is None and len(parts) == 2:
            # Class.attr that no class body defines (a property set in __init__, say)
            out.append(Use(cls.path, cls, 0.5 / len(classes), f"the report names {dotted}"))
    return out


def name_evidence(index: RepoIndex, report: str) -> list[FileEvidence]:
    """Dotted names in the report resolved to the functions and classes they name."""
    uses: list[Use] = []
    seen: set[str] = set()
    for m in _DOTTED.finditer(report):
        dotted = m.group(1).rstrip(".")
        if dotted in seen or dotted.endswith((".py", ".pyx", ".rst", ".txt", ".html")):
            continue
        seen.add(dotted)
        uses += [u for u in _dotted_uses(index, dotted) if not is_test_path(u.path)]
    return uses_evidence(uses, "name")


def path_evidence(
    report: str, files: Collection[str], *, located: Collection[str] = ()
) -> list[FileEvidence]:
    """Repository files the report names by their path (``sympy/core/basic.py``).

    ``located`` are the files a traceback frame or a warning location already
    names: their own kinds weigh them (a warnings summary names many files that
    are no suspects), so a path there is not counted again.

    A code host's link to the file (``…/blob/<ref>/pkg/mod.py#L35``) names it too,
    and its line anchor gives the evidence its lines.

    Installed-copy paths (``…/site-packages/pkg/mod.py``) map to the repository's
    file as a traceback frame's do (:func:`fixbugs.localize.traceback.relativize`).
    """
    out: dict[str, FileEvidence] = {}
    for link, a, b in _links(report):
        path = relativize(link, files)
        if path is None or is_test_path(path) or path in out or path in located:
            continue
        lines = ((a, max(a, b or a)),) if a else ()
        at = f", line {a}" if a else ""
        out[path] = FileEvidence(
            path, "path", 1.0, f"the report links to the file {path}{at}", lines
        )
    for m in bounded.finditer(_PATH, report):
        raw = m.group(1).replace("\\", "/")
        path = relativize(raw, files)
        if path is None or is_test_path(path) or path in out or path in located:
            continue
        out[path] = FileEvidence(path, "path", 1.0, f"the report names the file {raw}")
    return list(out.values())


def _links(text: str) -> list[tuple[str, int | None, int | None]]:
    """(path, first line, last line) of each code-host link to a Python file in ``text``.

    A link is ``http(s)://host/<anything>/blob/<ref>/<path>.py`` (or ``.pyx``),
    maybe with ``#L<a>`` or ``#L<a>-L<b>`` after it: the first ``/blob/``
    after the host that a ref and a path follow, the path running to its last
    ``.py`` before a ``)``, ``>`` or ``]``. No link holds white space or
    ``#`` before its anchor, so each run of other characters is read alone,
    with sorted positions and binary searches: O(n log n) whatever the text.
    """
    out: list[tuple[str, int | None, int | None]] = []
    for run in _RUN.finditer(text):
        r = run.group()
        if "/blob/" not in r:
            continue
        slashes = [m.start() for m in _SLASH.finditer(r)]
        stops = [m.start() for m in _STOP.finditer(r)]
        pys = [m.start() for m in _PY.finditer(r)]
        valid: list[tuple[int, int, int]] = []  # (blob, path start, path end)
        for m in _BLOB.finditer(r):
            k = m.start()
            ref_end = _after(slashes, k + 6)
            if ref_end is None or ref_end == k + 6:
                continue
            stop = _after(stops, ref_end + 1)
            stop = len(r) if stop is None else stop
            at = bisect.bisect_right(pys, stop - 3) - 1
            if at < 0 or pys[at] < ref_end + 2:
                continue
            dot = pys[at]
            end = dot + (4 if dot + 4 <= stop and r[dot + 3] == "x" else 3)
            valid.append((k, ref_end + 1, end))
        blobs = [v[0] for v in valid]
        pos = 0
        for m in _SCHEME.finditer(r):
            if m.start() < pos:
                continue
            host_end = _after(slashes, m.end())
            if host_end is None or host_end == m.end():
                continue
            i = bisect.bisect_left(blobs, host_end + 1)
            if i == len(blobs):
                continue
            _, start, end = valid[i]
            a = b = None
            if end == len(r) and (lines := _LINES.match(text, run.end())) is not None:
                a = int(lines["a"])
                b = int(lines["b"]) if lines["b"] else None
            out.append((r[start:end], a, b))
            pos = end
    return out


def _after(positions: list[int], at: int) -> int | None:
    """The first of the sorted ``positions`` at or after ``at``."""
    i = bisect.bisect_left(positions, at)
    return positions[i] if i < len(positions) else None
