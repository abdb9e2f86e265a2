"""What a run's reproduction was: genuine, an artefact of the environment, or none.

A reproduction that "failed" because a package is missing, the network is
shut or the test has no home proves nothing about the bug; counting it
would reward a broken environment. The machine's own failures are named
by :func:`fixbugs.pyenv.failures.environment_signature`, the one judge of
them; here two refinements apply to an evaluation: a ``pkg_resources``
``DistributionNotFound`` is the environment's too, and an import error of
one of the repository's own modules is the code's (a genuine failure).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

from fixbugs.eval.case import ReproductionKind
from fixbugs.pyenv.failures import environment_signature
from fixbugs.pyenv.testoutput import failures

__all__ = ["repository_modules", "reproduction_kind"]

_NO_MODULE = re.compile(r"No module named '(?P<mod>[\w.]+)'")


def repository_modules(tree: Path) -> frozenset[str]:
    """The top-level modules ``tree`` holds itself (packages and ``.py`` files at its root
    or under ``src/``)."""
    names: set[str] = set()
    for base in (tree, tree / "src"):
        try:
            entries = list(base.iterdir())
        except OSError:
            continue
        for p in entries:
            if p.suffix == ".py" and p.is_file():
                names.add(p.stem)
            elif p.is_dir() and (p / "__init__.py").is_file():
                names.add(p.name)
    return frozenset(names)


def _environmental(text: str, own: Collection[str]) -> bool:
    if "DistributionNotFound" in text:
        return True
    said = environment_signature(text)
    if said is None:
        return False
    missing = _NO_MODULE.search(said)
    return not (missing and missing["mod"].split(".")[0] in own)


def reproduction_kind(status: str, output: str, own: Collection[str] = ()) -> ReproductionKind:
    """``status`` (the report's: confirmed, passes, could_not_run, none) and the run's
    ``output`` as one word; ``own``: the repository's top-level modules."""
    if status == "could_not_run":
        return "environment"
    sections = failures("pytest", output) if output.strip() else ()
    env = bool(sections) and all(_environmental(f.text, own) for f in sections)
    if env:
        return "environment"
    return "genuine" if status == "confirmed" else "none"
