"""Wheels of coverage.py for every CPython FixBugs runs tests under, and installing one.

SBFL runs the project's tests under coverage.py with the project's own
interpreter, which is rarely FixBugs' and usually has no coverage.py. Each
coverage release supports a range of Python versions, so no single wheel
serves 3.6 to 3.13: :data:`RELEASES` names the newest release for each
minor version (from each release's ``Requires-Python``). :func:`fetch`
downloads each as a pure-Python wheel (``none-any``: coverage works without
its C tracer, only slower), which runs on any platform, and as this
machine's builds where there are some, once, at setup time (``scripts/setup``
runs this module), into FixBugs' wheel cache; at run time
:func:`best_wheel` picks, offline, the newest wheel of a folder that the
interpreter can run, and :func:`unpack` puts its ``coverage`` package into
a folder of its own (a wheel is a zip; no pip of the user's is involved).
"""

from __future__ import annotations

import re
import sys
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from email.parser import HeaderParser
from functools import cache
from pathlib import Path, PurePosixPath

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags, parse_tag
from packaging.version import InvalidVersion, Version

from fixbugs.pyenv.testenv import default_cache_dir
from fixbugs.sandbox.hosttools import ToolRun, run_tool

__all__ = [
    "MIN_COVERAGE",
    "RELEASES",
    "CoverageRelease",
    "CoverageWheel",
    "best_wheel",
    "fetch",
    "lean_report",
    "main",
    "own_wheel_dir",
    "release_for",
    "unpack",
]

# ``coverage json`` with per-test dynamic contexts, which SBFL reads, came in 5.0, whose
# json report drops the contexts of ``relative_files`` data (all ``{}``): 5.1 is the first.
MIN_COVERAGE = Version("5.1")
# Releases whose json report repeats each file's contexts per function and class (see RELEASES):
# a user's own install still serves, but no wheel of them is unpacked for SBFL.
_BLOATED = (Version("7.5.0"), Version("7.17.4"))


@dataclass(frozen=True, slots=True)
class CoverageRelease:
    """One coverage.py release and the Python minors (``(3, 6)``) it serves, both ends included."""

    version: str
    first: tuple[int, int]
    last: tuple[int, int]

    def serves(self, minor: tuple[int, int]) -> bool:
        return self.first <= minor <= self.last

    @property
    def minors(self) -> tuple[tuple[int, int], ...]:
        return tuple((self.first[0], m) for m in range(self.first[1], self.last[1] + 1))


# The newest release for each minor, checked against each release's Requires-Python
# (the next release of each line dropped the oldest Python the line served), except
# that from 7.5.0 to 7.17.3 ``coverage json --show-contexts`` repeats a file's contexts
# in every function and class of it: 147 MB for 20 tests of tornado's auth_test, past
# the 60 s the report step gets. 7.17.4 fixed it and requires 3.11, so 3.8 to 3.10 get
# 7.4.4, the last release before.
RELEASES: tuple[CoverageRelease, ...] = (
    CoverageRelease("6.2", (3, 6), (3, 6)),  # 6.3 requires 3.7
    CoverageRelease("7.2.7", (3, 7), (3, 7)),  # 7.3 requires 3.8
    CoverageRelease("7.4.4", (3, 8), (3, 10)),  # 7.5.0 to 7.17.3: the report above
    CoverageRelease("7.17.5", (3, 11), (3, 14)),
)


def own_wheel_dir() -> Path:
    """FixBugs' own wheel cache (``~/.cache/fixbugs/wheels``), which ``scripts/setup`` fills."""
    return default_cache_dir().parent / "wheels"


def release_for(minor: tuple[int, int]) -> CoverageRelease | None:
    """The release :func:`fetch` gets for Python ``minor``; None outside 3.6 to 3.14."""
    return next((r for r in RELEASES if r.serves(minor)), None)


@dataclass(frozen=True, slots=True)
class CoverageWheel:
    """A coverage.py wheel file, by what its name says."""

    path: Path
    version: Version
    tags: frozenset[Tag]

    @property
    def pure(self) -> bool:
        """No compiled code: the wheel runs on any interpreter its Requires-Python admits."""
        return all(t.abi == "none" and t.platform == "any" for t in self.tags)


_WHEEL_NAME = re.compile(
    r"^coverage-(?P<version>[^-]+)(-\d[^-]*)?-(?P<tags>[^-]+-[^-]+-[^-]+)\.whl$"
)


def _wheel(path: Path) -> CoverageWheel | None:
    m = _WHEEL_NAME.match(path.name)
    if m is None:
        return None
    try:
        return CoverageWheel(path, Version(m["version"]), frozenset(parse_tag(m["tags"])))
    except (InvalidVersion, ValueError):
        return None


@cache
def _platform_tags(minor: tuple[int, int]) -> frozenset[Tag]:
    """The tags a compiled wheel for CPython ``minor`` on this machine may carry."""
    return frozenset((*cpython_tags(minor), *compatible_tags(minor)))


def _requires_python(path: Path) -> SpecifierSet | None:
    """The wheel's ``Requires-Python`` (empty: any); None when the wheel cannot be read."""
    try:
        with zipfile.ZipFile(path) as zf:
            meta = next(
                (
                    n
                    for n in zf.namelist()
                    if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
                ),
                None,
            )
            if meta is None:
                return None
            headers = HeaderParser().parsestr(zf.read(meta).decode("utf-8", "replace"))
        return SpecifierSet(headers.get("Requires-Python", "") or "")
    except (OSError, zipfile.BadZipFile, InvalidSpecifier, UnicodeError):
        return None


def lean_report(version: Version) -> bool:
    """Whether coverage.py ``version`` gives SBFL its per-test report without the repeats."""
    return version >= MIN_COVERAGE and not _BLOATED[0] <= version < _BLOATED[1]


def _runs_on(wheel: CoverageWheel, minor: tuple[int, int]) -> bool:
    if not lean_report(wheel.version):
        return False
    if not wheel.pure and not wheel.tags & _platform_tags(minor):
        return False
    spec = _requires_python(wheel.path)
    return spec is not None and spec.contains(f"{minor[0]}.{minor[1]}.0", prereleases=True)


def best_wheel(minor: tuple[int, int], folders: Iterable[Path]) -> CoverageWheel | None:
    """The newest coverage wheel in ``folders`` for CPython ``minor`` on this machine.

    Releases before 5.1 and those of the bloated json report are left out.

    At one version a compiled wheel goes before a pure one (its C tracer is
    several times faster).
    """
    found = (_wheel(p) for d in folders for p in sorted(d.glob("coverage-*.whl")))
    usable = [w for w in found if w is not None and _runs_on(w, minor)]
    return max(usable, key=lambda w: (w.version, not w.pure), default=None)


def unpack(wheel: Path, dest: Path) -> None:
    """Extract the wheel's ``coverage`` package and its ``dist-info`` into ``dest``.

    Nothing else (no ``.pth`` file, no scripts): the folder goes on the
    tests' ``PYTHONPATH`` and must add ``coverage`` alone.
    """
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            name = PurePosixPath(info.filename)
            if name.is_absolute() or ".." in name.parts or not name.parts:
                raise ValueError(f"{wheel.name}: unsafe member {info.filename!r}")
            top = name.parts[0]
            if top == "coverage" or (top.startswith("coverage-") and top.endswith(".dist-info")):
                zf.extract(info, dest)


def _download(dest: Path, version: str, minor: tuple[int, int], *tags: str) -> ToolRun:
    return run_tool(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--disable-pip-version-check",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            "{}.{}".format(*minor),
            *tags,
            "-d",
            str(dest),
            f"coverage=={version}",
        ],
        timeout_s=300,
    )


def fetch(dest: Path, releases: Sequence[CoverageRelease] = RELEASES) -> list[str]:
    """Download each release's wheels into ``dest``; what is missing, one line per release.

    Needs the package index (setup time only). The pure-Python wheel runs
    anywhere; releases before 7.9 publish it under PyPy's tags only
    (``pp38-none-any``): the same code. Beside it, where the release has one,
    goes the build for each of its Pythons on this machine, whose C tracer
    runs a large test module under coverage several times faster.
    """
    dest.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    for rel in releases:
        have = [w for w in map(_wheel, dest.glob(f"coverage-{rel.version}-*.whl")) if w]
        if not any(w.pure for w in have):
            said = ""
            for implementation in ("py", "pp"):
                pure = ("--implementation", implementation, "--abi", "none", "--platform", "any")
                out = _download(dest, rel.version, rel.first, *pure)
                if out.ok:
                    break
                said = (out.said().strip().splitlines() or ["no output"])[-1]
            else:
                problems.append(f"coverage {rel.version}: {said[:200]}")
        for minor in rel.minors:
            if not any(not w.pure and w.tags & _platform_tags(minor) for w in have):
                _download(dest, rel.version, minor)  # none for this machine: the pure one serves
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m fixbugs.pyenv.coveragewheels [DEST]``: fetch into DEST or FixBugs' cache."""
    args = list(sys.argv[1:] if argv is None else argv)
    dest = Path(args[0]) if args else own_wheel_dir()
    problems = fetch(dest)
    for line in problems:
        print(f"note: could not fetch {line}", file=sys.stderr)
    if problems:
        print("note: SBFL will not run under those Python versions", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
