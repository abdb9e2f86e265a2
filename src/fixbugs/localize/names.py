"""Names the report's text uses: ``Class.method``, dotted module paths, repository paths.

Issue writers point at code by name in their prose as often as in their
snippets: "the code for this is in ``Function._eval_evalf``", "see
``sympy.printing.latex``", "in ``sphinx/ext/napoleon/docstring.py``". Each
form is resolved to a definition:

* a dotted name that starts with a module (``pkg.mod.Class.meth``) goes
  through the module graph (:func:`fixbugs.localize.resolve.dotted_target`);
* ``Class.member`` (``Class`` defined by at most :data:`MAX_CLASSES`
  classes) is the member that class, or a base of it, defines;
* a path that names a repository file (by its whole path, or a suffix of two
  parts or more) is that file.

Evidence kinds: ``name`` for the first two (lines: the function's span),
``path`` for the last. Only the report's own words are read: a name the
report's code binds is :mod:`fixbugs.localize.snippet_calls`'s business,
but writing ``Thing.method`` in prose counts here too.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from fixbugs.index import RepoIndex
from fixbugs.localize.evidence import Evidence
from fixbugs.localize.resolve import Target, dotted_target, member
from fixbugs.localize.snippet_calls import Use, uses_evidence
from fixbugs.localize.traceback import is_test_path, relativize

__all__ = ["MAX_CLASSES", "name_evidence", "path_evidence"]

MAX_CLASSES = 3  # ``Class.member`` where more classes share the name points nowhere
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w])")
_PATH = re.compile(r"(?<![\w/.~-])((?:~?[/\\]|[A-Za-z]:[/\\])?(?:[\w.-]+[/\\])+[\w-]+\.pyx?)\b")
# a code host's link to a file at a commit or branch, maybe to its lines:
# https://github.com/o/r/blob/<ref>/pkg/mod.py#L12-L14 (GitLab: /-/blob/, #L12-14)
_LINK = re.compile(
    r"https?://[^\s/]+/[^\s#]*?/blob/[^\s/]+/(?P<path>[^\s#)>\]]+\.pyx?)"
    r"(?:#L(?P<a>\d+)(?:-L?(?P<b>\d+))?)?"
)
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


def name_evidence(index: RepoIndex, report: str) -> list[Evidence]:
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
) -> list[Evidence]:
    """Repository files the report names by their path (``sympy/core/basic.py``).

    ``located`` are the files a traceback frame or a warning location already
    names: their own kinds weigh them (a warnings summary names many files that
    are no suspects), so a path there is not counted again.

    A code host's link to the file (``…/blob/<ref>/pkg/mod.py#L35``) names it too,
    and its line anchor gives the evidence its lines.

    Installed-copy paths (``…/site-packages/pkg/mod.py``) map to the repository's
    file as a traceback frame's do (:func:`fixbugs.localize.traceback.relativize`).
    """
    out: dict[str, Evidence] = {}
    for m in _LINK.finditer(report):
        path = relativize(m.group("path"), files)
        if path is None or is_test_path(path) or path in out or path in located:
            continue
        a = int(m.group("a")) if m.group("a") else None
        b = int(m.group("b")) if m.group("b") else a
        lines = ((a, max(a, b or a)),) if a else ()
        at = f", line {a}" if a else ""
        out[path] = Evidence(path, "path", 1.0, f"the report links to the file {path}{at}", lines)
    for m in _PATH.finditer(report):
        raw = m.group(1).replace("\\", "/")
        path = relativize(raw, files)
        if path is None or is_test_path(path) or path in out or path in located:
            continue
        out[path] = Evidence(path, "path", 1.0, f"the report names the file {raw}")
    return list(out.values())
