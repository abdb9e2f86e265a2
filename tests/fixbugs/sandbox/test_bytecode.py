"""The reproduction's compiled modules reach the forks, and nothing else of its copy does."""

from __future__ import annotations

import asyncio
import os
import py_compile
import shutil
import sys
from pathlib import Path

from fixbugs.sandbox import Sandbox
from fixbugs.sandbox.bytecode import keep, restore

_TAG = sys.implementation.cache_tag


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """A pristine tree and a copy of it (as the sandbox makes them, mtimes kept)."""
    pristine = tmp_path / "pristine"
    (pristine / "pkg").mkdir(parents=True)
    (pristine / "pkg" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (pristine / "pkg" / "other.py").write_text("X = 1\n")
    copy = tmp_path / "copy"
    shutil.copytree(pristine, copy)
    return pristine, copy


def _compile(copy: Path, name: str) -> Path:
    src = copy / "pkg" / f"{name}.py"
    out = copy / "pkg" / "__pycache__" / f"{name}.{_TAG}.pyc"
    py_compile.compile(str(src), cfile=str(out), doraise=True)
    return out


def test_a_module_compiled_from_the_pristine_source_is_kept(tmp_path: Path) -> None:
    pristine, copy = _tree(tmp_path)
    pyc = _compile(copy, "calc")
    kept = keep(copy, pristine, tmp_path / "kept")
    assert (kept.files, kept.bytes) == (1, pyc.stat().st_size)
    fork = tmp_path / "fork"
    shutil.copytree(pristine, fork)
    restore(tmp_path / "kept", fork)
    assert (fork / "pkg" / "__pycache__" / pyc.name).read_bytes() == pyc.read_bytes()


def test_what_a_test_could_have_shaped_is_not_kept(tmp_path: Path) -> None:
    pristine, copy = _tree(tmp_path)
    cache = copy / "pkg" / "__pycache__"
    # a source the run changed: its pyc's header is no longer the pristine file's
    (copy / "pkg" / "other.py").write_text("X = 2  # changed by a test\n")
    _compile(copy, "other")
    # a pytest rewrite records the path it was written at; an optimised one is not imported
    good = _compile(copy, "calc")
    shutil.copy(good, cache / f"calc.{_TAG}-pytest-7.4.0.pyc")
    shutil.copy(good, cache / f"calc.{_TAG}.opt-1.pyc")
    # a module with no pristine source, and a link to a host file under a kept name
    shutil.copy(good, cache / f"planted.{_TAG}.pyc")
    secret = tmp_path / "secret"
    secret.write_bytes(good.read_bytes())
    os.symlink(secret, copy / "pkg" / "__pycache__" / f"link.{_TAG}.pyc")
    (pristine / "pkg" / "link.py").write_text("")
    kept = keep(copy, pristine, tmp_path / "kept")
    names = sorted(p.name for p in (tmp_path / "kept").rglob("*.pyc"))
    assert names == [good.name] and kept.files == 1


def test_a_cache_folder_swapped_for_a_link_is_not_followed(tmp_path: Path) -> None:
    pristine, copy = _tree(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    py_compile.compile(
        str(copy / "pkg" / "calc.py"), cfile=str(elsewhere / f"calc.{_TAG}.pyc"), doraise=True
    )
    os.symlink(elsewhere, copy / "pkg" / "__pycache__")
    assert keep(copy, pristine, tmp_path / "kept").files == 0
    assert not (tmp_path / "kept").exists()


def test_forks_import_the_kept_module_and_a_patched_one_afresh(sandbox: Sandbox) -> None:
    probe = f"{sys.executable} -c 'from pkg.calc import add; print(add(2, 2))'"

    async def run(sb: Sandbox) -> str:
        return (await sb.run(probe, timeout_s=60)).stdout.strip()

    assert asyncio.run(run(sandbox)) == "0"
    assert "kept 1 compiled module(s)" in sandbox.keep_bytecode()
    pyc = Path("pkg") / "__pycache__" / f"calc.{_TAG}.pyc"
    kept = (sandbox.root / pyc).read_bytes()
    with sandbox.fork() as fork:
        assert (fork.root / pyc).read_bytes() == kept
        assert asyncio.run(run(fork)) == "0"
        assert (fork.root / pyc).read_bytes() == kept  # imported as it was, not compiled again
        assert fork.diff() == ""
    with sandbox.fork() as fork:
        fork.apply_patch(
            "--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,2 +1,2 @@\n"
            " def add(a, b):\n-    return a - b\n+    return a + b\n"
        )
        assert asyncio.run(run(fork)) == "4"
        assert "+    return a + b" in fork.diff()
