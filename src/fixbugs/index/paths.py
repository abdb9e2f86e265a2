"""Which files are source, which are tests: the conventions the index and the localizer share."""

from __future__ import annotations

from pathlib import PurePosixPath

__all__ = ["SOURCE_SUFFIXES", "is_source", "is_test_path"]

SOURCE_SUFFIXES = frozenset(
    {
        ".py",
        ".pyx",
        ".js",
        ".ts",
        ".tsx",
        ".jsx",
        ".go",
        ".rs",
        ".java",
        ".rb",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".php",
        ".kt",
        ".scala",
        ".swift",
        ".sh",
    }
)


def is_source(path: str) -> bool:
    """A file of program source, by its suffix."""
    return PurePosixPath(path).suffix in SOURCE_SUFFIXES


def is_test_path(path: str) -> bool:
    """Test code by the usual conventions (tests/ folders, test_*.py, *_test.py, conftest.py)."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    return (
        any(p in ("tests", "test", "testing") for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )
