"""A case archive is extracted as the repository root, wrapped in one folder or not."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from fixbugs.eval.archive import extract_tree


def _archive(path: Path, members: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in members.items():
            if name.endswith("/"):
                info = tarfile.TarInfo(name.rstrip("/"))
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
                continue
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_a_lone_wrapper_folder_is_stripped(tmp_path: Path):
    arc = _archive(
        tmp_path / "a.tar.gz",
        {"repo/": "", "repo/setup.py": "x", "repo/pkg/": "", "repo/pkg/mod.py": "y"},
    )
    extract_tree(arc, tmp_path / "out")
    assert (tmp_path / "out/pkg/mod.py").read_text() == "y"
    assert (tmp_path / "out/setup.py").exists()
    assert not (tmp_path / "out/repo").exists()


def test_files_at_the_top_stay_where_they_are(tmp_path: Path):
    arc = _archive(tmp_path / "a.tar.gz", {"setup.py": "x", "pkg/mod.py": "y"})
    extract_tree(arc, tmp_path / "out")
    assert (tmp_path / "out/pkg/mod.py").read_text() == "y"


def test_only_names_root_relative_paths(tmp_path: Path):
    arc = _archive(
        tmp_path / "a.tar.gz", {"repo/setup.py": "x", "repo/tests/test_a.py": "t", "repo/b.py": "b"}
    )
    extract_tree(arc, tmp_path / "out", only=["./tests/test_a.py"])
    assert [p.name for p in (tmp_path / "out").rglob("*.py")] == ["test_a.py"]
