"""Which coverage.py wheel serves which Python, offline, and the overlay built from one."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from fixbugs.pyenv import coveragewheels
from fixbugs.pyenv.coveragewheels import RELEASES, best_wheel, fetch, release_for, unpack
from fixbugs.pyenv.overlay import prepare_env
from fixbugs.pyenv.userenv import TestEnv
from fixbugs.sandbox.hosttools import ToolRun

_MANYLINUX = "manylinux_2_17_x86_64.manylinux2014_x86_64"


def _wheel(folder: Path, name: str, requires: str | None = ">=3.6") -> Path:
    """A wheel file like coverage's: ``coverage/``, its ``dist-info``, and a ``.pth`` file."""
    folder.mkdir(parents=True, exist_ok=True)
    version = name.split("-")[1]
    path = folder / name
    meta = "Metadata-Version: 2.1\nName: coverage\nVersion: " + version + "\n"
    if requires is not None:
        meta += f"Requires-Python: {requires}\n"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("coverage/__init__.py", f"__version__ = {version!r}\n")
        zf.writestr(f"coverage-{version}.dist-info/METADATA", meta)
        zf.writestr("a1_coverage.pth", "import coverage\n")
        zf.writestr(f"coverage-{version}.data/scripts/coverage", "#!python\n")
    return path


def _best(minor: tuple[int, int], folder: Path) -> str:
    wheel = best_wheel(minor, [folder])
    return wheel.path.name if wheel else ""


def test_the_releases_cover_every_python_from_3_6_to_3_14_once():
    minors = [(3, m) for m in range(6, 15)]
    assert [sum(r.serves(m) for r in RELEASES) for m in minors] == [1] * len(minors)
    assert release_for((3, 5)) is None and release_for((3, 6)) == RELEASES[0]
    # newer Pythons get newer releases
    versions = [tuple(int(p) for p in r.version.split(".")) for r in RELEASES]
    assert versions == sorted(versions)


def test_the_newest_wheel_that_the_python_admits(tmp_path: Path):
    d = tmp_path / "w"
    _wheel(d, "coverage-6.2-pp36.pp37.pp38-none-any.whl", ">=3.6")
    _wheel(d, "coverage-7.2.7-pp37.pp38.pp39-none-any.whl", ">=3.7")
    _wheel(d, "coverage-7.17.5-py3-none-any.whl", ">=3.11")
    assert _best((3, 6), d).startswith("coverage-6.2-")
    assert _best((3, 8), d).startswith("coverage-7.2.7-")
    assert _best((3, 13), d).startswith("coverage-7.17.5-")
    assert best_wheel((3, 5), [d]) is None


def test_compiled_wheels_only_for_their_python_and_first_at_one_version(tmp_path: Path):
    d = tmp_path / "w"
    _wheel(d, f"coverage-7.4.4-cp310-cp310-{_MANYLINUX}.whl")
    _wheel(d, "coverage-7.4.4-py3-none-any.whl")
    assert _best((3, 10), d).startswith("coverage-7.4.4-cp310")
    assert _best((3, 11), d) == "coverage-7.4.4-py3-none-any.whl"
    _wheel(d, "coverage-7.4.4-cp310-cp310-win_amd64.whl")  # another platform's
    (d / f"coverage-7.4.4-cp310-cp310-{_MANYLINUX}.whl").unlink()
    assert _best((3, 10), d) == "coverage-7.4.4-py3-none-any.whl"


def test_releases_with_the_bloated_json_report_are_skipped(tmp_path: Path):
    d = tmp_path / "w"
    _wheel(d, "coverage-7.4.4-pp38.pp39.pp310-none-any.whl", ">=3.8")
    _wheel(d, "coverage-7.6.1-pp38.pp39.pp310-none-any.whl", ">=3.8")
    _wheel(d, "coverage-7.17.3-py3-none-any.whl", ">=3.10")
    assert _best((3, 10), d) == "coverage-7.4.4-pp38.pp39.pp310-none-any.whl"
    _wheel(d, "coverage-7.17.4-py3-none-any.whl", ">=3.10")
    assert _best((3, 10), d) == "coverage-7.17.4-py3-none-any.whl"


def test_too_old_unreadable_or_misnamed_wheels_are_skipped(tmp_path: Path):
    d = tmp_path / "w"
    _wheel(d, "coverage-4.5.4-py2.py3-none-any.whl", None)  # no `coverage json`
    (d / "coverage-7.0-py3-none-any.whl").write_bytes(b"not a zip")
    _wheel(d, "coverage-x-py3-none-any.whl")
    assert best_wheel((3, 8), [d]) is None
    _wheel(d, "coverage-5.0-py3-none-any.whl", None)  # its json report loses the contexts
    assert _best((3, 8), d) == ""
    _wheel(d, "coverage-5.1-py3-none-any.whl", None)  # no Requires-Python: any
    assert _best((3, 8), d) == "coverage-5.1-py3-none-any.whl"


def test_unpack_takes_the_package_and_its_metadata_only(tmp_path: Path):
    wheel = _wheel(tmp_path / "w", "coverage-7.10.7-py3-none-any.whl")
    unpack(wheel, tmp_path / "out")
    got = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*"))
    assert got == [
        "coverage",
        "coverage-7.10.7.dist-info",
        "coverage-7.10.7.dist-info/METADATA",
        "coverage/__init__.py",
    ]
    bad = tmp_path / "coverage-9.0-py3-none-any.whl"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("coverage/../../escape.py", "")
    with pytest.raises(ValueError, match="unsafe member"):
        unpack(bad, tmp_path / "out2")
    assert not (tmp_path / "escape.py").exists()


def test_fetch_skips_present_wheels_and_says_what_it_could_not_get(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    asked: list[list[str]] = []

    def pip(argv: list[str], **_: object) -> ToolRun:
        asked.append(argv)
        return ToolRun(tuple(argv), 1, b"", b"ERROR: No matching distribution found\n")

    def pure(argv: list[str]) -> str | None:
        return argv[argv.index("--implementation") + 1] if "--implementation" in argv else None

    monkeypatch.setattr(coveragewheels, "run_tool", pip)
    _wheel(tmp_path, "coverage-6.2-pp36.pp37.pp38-none-any.whl")
    problems = fetch(tmp_path, RELEASES[:2])
    # only a missing pure wheel is a problem: this machine's builds are a speed-up
    assert problems == ["coverage 7.2.7: ERROR: No matching distribution found"]
    got = [(a[-1], a[a.index("--python-version") + 1], pure(a)) for a in asked]
    assert got == [
        ("coverage==6.2", "3.6", None),  # 6.2's pure wheel was there, its build was not
        ("coverage==7.2.7", "3.7", "py"),
        ("coverage==7.2.7", "3.7", "pp"),
        ("coverage==7.2.7", "3.7", None),
    ]
    asked.clear()
    _wheel(tmp_path, f"coverage-6.2-cp36-cp36m-{_MANYLINUX}.whl")
    fetch(tmp_path, RELEASES[:1])
    assert asked == []


def test_the_overlay_replaces_a_coverage_too_old_for_sbfl_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    wheels = _wheel(tmp_path / "w", "coverage-7.4.4-pp38.pp39.pp310-none-any.whl", ">=3.8").parent
    monkeypatch.setenv("FIXBUGS_WHEELS", str(wheels))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    env = TestEnv(
        python=tmp_path / "venv" / "bin" / "python",
        source="--python",
        version="3.8.18",
        prefix=tmp_path / "venv",
        base_prefix=tmp_path / "base",
        pytest="3.10.1",
        coverage="4.5.4",  # no `coverage json`, no per-test contexts
    )
    got, notes = prepare_env(env)
    assert got.overlay is not None and got.overlay_coverage == "7.4.4"
    assert (got.overlay / "coverage" / "__init__.py").exists()
    assert notes[0].startswith(
        "Python 3.8 has coverage.py 4.5.4, older than 5.1: coverage.py 7.4.4"
    )
    assert prepare_env(replace(env, coverage="5.5")) == (replace(env, coverage="5.5"), [])
    # Python 3.7: the folder has nothing for it, and the one line says what to do
    bare, notes = prepare_env(replace(env, version="3.7.16", coverage=None))
    assert bare.overlay is None and notes == [
        "SBFL will not run: coverage.py is not installed for Python 3.7 and FixBugs has no "
        "copy for it (run scripts/setup, or put a coverage wheel in $FIXBUGS_WHEELS)"
    ]


@pytest.mark.parametrize(("installed", "served"), [("7.6.1", "7.4.4"), ("7.4.0", "7.4.0")])
def test_the_overlay_copies_an_existing_install_only_if_its_report_is_lean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installed: str, served: str
):
    """A base interpreter's coverage 7.6.1 (json contexts repeated) is passed over for a wheel."""
    wheels = _wheel(tmp_path / "w", "coverage-7.4.4-pp38.pp39.pp310-none-any.whl", ">=3.8").parent
    monkeypatch.setenv("FIXBUGS_WHEELS", str(wheels))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    site = tmp_path / "base" / "lib" / "python3.9" / "site-packages"
    (site / "coverage").mkdir(parents=True)
    (site / "coverage" / "__init__.py").write_text(f"__version__ = {installed!r}\n")
    (site / f"coverage-{installed}.dist-info").mkdir()
    env = TestEnv(
        python=tmp_path / "venv" / "bin" / "python",
        source="--python",
        version="3.9.18",
        prefix=tmp_path / "venv",
        base_prefix=tmp_path / "base",
        pytest="8.3.1",
        coverage=None,
    )
    got, _ = prepare_env(env)
    assert got.overlay is not None and got.overlay_coverage == served
