"""Understanding test commands: which tests they name, and how each one ended.

Validation compares per-test outcomes before and after a patch ("previously
passing tests still pass"), so it needs the test ids a command covers and a
verbose variant of it whose output names every test with its outcome
(read by :func:`fixbugs.pyenv.testoutput.parse_outcomes`).
pytest and unittest are understood; any other command is judged by its exit
status alone, and the report says so.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from os import PathLike
from typing import Literal

from fixbugs.pyenv.testid import TestId
from fixbugs.pyenv.testoutput import parse_outcomes

__all__ = [
    "TestCommand",
    "files_of_tests",
    "parse_test_command",
    "regressions",
    "suite_shards",
    "suite_test_files",
    "unittest_module",
]


@dataclass(frozen=True, slots=True)
class TestCommand:
    """A test command and what we understood of it.

    Every reading of a command line goes through :func:`parse_test_command`,
    so the agent, the eval and the scorer split it, find its tests and run
    it with an interpreter of their own the same way.
    """

    __test__ = False  # not a pytest test class

    command: str
    runner: Literal["pytest", "unittest", "other"]
    targets: tuple[str, ...]  # node ids / modules as given
    files: tuple[str, ...]  # test files the targets live in (pytest)
    # the words as the shell splits them; on a quote left open (a line cut
    # short in a report) the whitespace-separated words, and nothing else is read
    argv: tuple[str, ...]

    @property
    def test_ids(self) -> tuple[str, ...]:
        """The words naming a test or a test file (``path::name``, ``path.py``), whatever
        the runner: a wrapper script or tox passes them on to pytest."""
        return tuple(w for w in self.argv[1:] if "::" in w or w.endswith(".py"))

    def with_python(self, python: str | PathLike[str]) -> list[str]:
        """The argv, a leading ``python``/``python3`` replaced by ``python``: the
        command run with a chosen interpreter rather than whichever ``PATH`` finds."""
        argv = list(self.argv)
        if argv and argv[0] in ("python", "python3"):
            argv[0] = str(python)
        return argv

    def verbose(self) -> str | None:
        """A command running every test of the same files verbosely, or None."""
        if self.runner == "pytest" and self.files:
            return "python -m pytest -v -p no:cacheprovider " + " ".join(
                shlex.quote(f) for f in self.files
            )
        if self.runner == "unittest" and self.targets:
            mods = sorted({unittest_module(t) for t in self.targets})
            return "python -m unittest -v " + " ".join(shlex.quote(m) for m in mods)
        return None

    def suite(self) -> str | None:
        """A pytest run of the whole test folder the targets live in, or None.

        Validation's last gate: a fix that passes its own test file must not
        break tests elsewhere (a shared helper changed for one caller).
        """
        roots: set[str] = set()
        if self.runner == "pytest":
            roots = {f.split("/")[0] for f in self.files if "/" in f}
        elif self.runner == "unittest":
            roots = {t.split(".")[0] for t in self.targets if "." in t and "/" not in t}
        if len(roots) != 1:
            return None
        return f"python -m pytest -v -p no:cacheprovider {shlex.quote(roots.pop())}"


def parse_test_command(command: str) -> TestCommand:
    try:
        argv = shlex.split(command)
    except ValueError:
        return TestCommand(command, "other", (), (), tuple(command.split()))
    runner: Literal["pytest", "unittest", "other"] = "other"
    rest: list[str] = []
    for i, a in enumerate(argv):
        if a in {"pytest", "py.test"} or a.endswith("/pytest"):
            runner, rest = "pytest", argv[i + 1 :]
            break
        if a == "-m" and i + 1 < len(argv) and argv[i + 1] in {"pytest", "unittest"}:
            runner = "pytest" if argv[i + 1] == "pytest" else "unittest"
            rest = argv[i + 2 :]
            break
    targets = tuple(a for a in rest if not a.startswith("-"))
    files = files_of_tests(targets) if runner == "pytest" else ()
    return TestCommand(command, runner, targets, files, tuple(argv))


def files_of_tests(test_ids: Iterable[str]) -> tuple[str, ...]:
    """The files that pytest node ids or test files name (``path.py::name``,
    ``path.py``), once each, in first-seen order; other words are skipped."""
    seen: dict[str, None] = {}
    for t in test_ids:
        path = TestId.parse(t).path
        if path.endswith(".py"):
            seen.setdefault(path, None)
    return tuple(seen)


def regressions(before: Mapping[str, str], output: str) -> list[str]:
    """Tests that passed ``before`` and did not pass in the run that printed ``output``."""
    after = parse_outcomes(output)
    return [t for t, was in before.items() if was == "passed" and after.get(t) != "passed"]


def unittest_module(target: str) -> str:
    """The module part of a unittest target (``pkg.mod.Class.test`` -> ``pkg.mod``)."""
    if "/" in target or target.endswith(".py"):
        return target
    parts = target.split(".")
    for i, p in enumerate(parts):
        if p[:1].isupper():
            return ".".join(parts[:i]) or target
    return target


_PYTEST_CONFIGS = ("pytest.ini", "setup.cfg", "tox.ini", "pyproject.toml")


def suite_test_files(suite: str, files: Mapping[str, str]) -> list[str] | None:
    """The test files ``suite`` (a pytest run of one folder) runs, by pytest's default
    naming, or None when only pytest knows: not a plain pytest run of a folder, or the
    repository names its test files itself (``python_files``)."""
    parsed = parse_test_command(suite)
    if parsed.runner != "pytest":
        return None
    folder = parsed.argv[-1]  # TestCommand.suite() puts the folder last
    if folder.startswith("-") or folder.endswith(".py") or "::" in folder:
        return None
    root = folder.rstrip("/") + "/"
    if any("python_files" in files.get(cfg, "") for cfg in _PYTEST_CONFIGS):
        return None
    return [
        p
        for p in files
        if p.startswith(root)
        and p.endswith(".py")
        and (p.rsplit("/", 1)[-1].startswith("test_") or p.endswith("_test.py"))
    ]


def suite_shards(suite: str, files: Mapping[str, str], n: int) -> tuple[str, ...]:
    """``suite`` (a pytest run of one folder) split into ``n`` runs of its test files.

    The files are dealt out largest first to the lightest shard, so the
    shards take about as long. Nothing is split (``()``) when there is less
    than two files, or when only pytest knows which files the folder runs
    (:func:`suite_test_files`).
    """
    tests = suite_test_files(suite, files) if n >= 2 else None
    if tests is None or len(tests) < 2:
        return ()
    groups: list[list[str]] = [[] for _ in range(min(n, len(tests)))]
    weight = [0] * len(groups)
    for p in sorted(tests, key=lambda p: (-len(files[p]), p)):
        i = weight.index(min(weight))
        groups[i].append(p)
        weight[i] += len(files[p]) + 1
    return tuple(
        "python -m pytest -v -p no:cacheprovider " + " ".join(shlex.quote(p) for p in sorted(g))
        for g in groups
    )
