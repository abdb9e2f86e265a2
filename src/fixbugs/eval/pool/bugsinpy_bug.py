"""One BugsInPy bug folder read into what a pool case needs, with no network and no git.

A bug folder (``projects/<p>/bugs/<n>/`` of github.com/soarsmu/BugsInPy)
holds ``bug.info`` (the buggy and fixed commits, the test files),
``bug_patch.txt`` (the real fix), ``run_test.sh`` (the commands that fail:
``pytest path::test`` lines, or ``python -m unittest -q mod.Class.test``
lines, which are read as the pytest ids of the same tests) and
``requirements.txt`` (a frozen list, see :mod:`.pins`). ``project.info``
beside ``bugs/`` names the project's GitHub repository.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from fixbugs.errors import InputError
from fixbugs.eval.pool.pins import clean_pins, decode_text

__all__ = ["BugsInPyBug", "github_repo", "parse_bug", "run_test_ids"]

_KEY = re.compile(r'^\s*(?P<key>\w+)\s*=\s*"?(?P<value>[^"\n]*)"?\s*$', re.M)
_GITHUB = re.compile(r"github\.com/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)(?:\.git)?/?$")


@dataclass(frozen=True, slots=True)
class BugsInPyBug:
    """What a BugsInPy bug folder says, read and checked."""

    project: str
    number: int
    buggy_commit: str
    fixed_commit: str
    test_files: tuple[str, ...]
    failing_tests: tuple[str, ...]  # pytest node ids
    pins: tuple[str, ...]  # cleaned (:func:`.pins.clean_pins`)
    patch: str

    @property
    def case_id(self) -> str:
        return f"{self.project}-{self.number}"


def _keys(text: str) -> dict[str, str]:
    return {m["key"].lower(): m["value"].strip() for m in _KEY.finditer(text)}


def github_repo(project_info: str) -> str | None:
    """``owner/name`` of ``project.info``'s ``github_url``, or None."""
    m = _GITHUB.search(_keys(project_info).get("github_url", "").strip())
    return f"{m['owner']}/{m['name']}" if m else None


def _names_tests(name: str) -> bool:
    """A test method, or a whole test class; a helper (``_get_spiderargs``) is neither."""
    return name.startswith("test") or name[:1].isupper()


def _unittest_id(target: str, test_files: tuple[str, ...]) -> str | None:
    """``tests.test_x.Class.test_y`` as ``tests/test_x.py::Class::test_y``, a class as
    ``tests/test_x.py::Class`` (None: no test)."""
    for f in test_files:
        module = f.removesuffix(".py").replace("/", ".")
        if target.startswith(module + "."):
            parts = target[len(module) + 1 :].split(".")
            return f"{f}::{'::'.join(parts)}" if _names_tests(parts[-1]) else None
    parts = target.split(".")
    for i, p in enumerate(parts):  # the first capitalised part is the class
        if p[:1].isupper() and i:
            rest = parts[i:]
            if not _names_tests(rest[-1]):
                return None
            return f"{'/'.join(parts[:i])}.py::{'::'.join(rest)}"
    return None


def run_test_ids(run_test: str, test_files: tuple[str, ...]) -> tuple[str, ...]:
    """The pytest node ids of the tests ``run_test.sh`` runs, once each, in order."""
    ids: dict[str, None] = {}
    for line in run_test.splitlines():
        try:
            argv = shlex.split(line, comments=True)
        except ValueError:
            continue
        runner, rest = "", []
        for i, a in enumerate(argv):
            if a in ("pytest", "py.test") or a.endswith("/pytest"):
                runner, rest = "pytest", argv[i + 1 :]
                break
            if a == "-m" and i + 1 < len(argv) and argv[i + 1] in ("pytest", "unittest"):
                runner, rest = argv[i + 1], argv[i + 2 :]
                break
        for t in (a for a in rest if not a.startswith("-")):
            found = t if runner == "pytest" else _unittest_id(t, test_files)
            if found:
                ids.setdefault(found, None)
    return tuple(ids)


def _label(folder: Path) -> str:
    """``projects/<p>/bugs/<n>``: the bug as BugsInPy names it, wherever it was read."""
    return "/".join(folder.parts[-4:])


def _read(folder: Path, name: str) -> str:
    try:
        return decode_text((folder / name).read_bytes())
    except OSError:
        raise InputError(f"{_label(folder)}: no {name}") from None


def parse_bug(folder: Path, project: str) -> BugsInPyBug:
    """The bug in ``folder`` (``…/projects/<project>/bugs/<n>``); one-line :class:`InputError`
    when a file is missing or says nothing usable."""
    if not folder.name.isdigit():
        raise InputError(f"{_label(folder)}: a bug folder is named by its number")
    info = _keys(_read(folder, "bug.info"))
    buggy, fixed = info.get("buggy_commit_id", ""), info.get("fixed_commit_id", "")
    if not (re.fullmatch(r"[0-9a-f]{40}", buggy) and re.fullmatch(r"[0-9a-f]{40}", fixed)):
        raise InputError(f"{_label(folder)}/bug.info: no buggy and fixed commit ids")
    test_files = tuple(t.strip() for t in info.get("test_file", "").split(";") if t.strip())
    if not test_files:
        raise InputError(f"{_label(folder)}/bug.info: no test_file")
    failing = run_test_ids(_read(folder, "run_test.sh"), test_files)
    if not failing:
        raise InputError(f"{_label(folder)}/run_test.sh: names no pytest or unittest test")
    patch = _read(folder, "bug_patch.txt")
    if "\n+++ " not in "\n" + patch:
        raise InputError(f"{_label(folder)}/bug_patch.txt: not a unified diff")
    pins = clean_pins(_read(folder, "requirements.txt"), project)
    return BugsInPyBug(project, int(folder.name), buggy, fixed, test_files, failing, pins, patch)
