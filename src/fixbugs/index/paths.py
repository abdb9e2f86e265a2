"""Which files are source, which are tests: the conventions the index and the localizer share."""

from __future__ import annotations

from pathlib import PurePosixPath

__all__ = ["SOURCE_SUFFIXES", "is_source", "is_support_path", "is_test_path"]

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


# folders of documentation, examples and build tooling, at the repository's top
_SUPPORT_DIRS = frozenset(
    {"doc", "docs", "example", "examples", "benchmarks", "asv_bench", "ci", "release"}
)
# files at the repository's top that build, package or automate the project
_SUPPORT_FILES = frozenset({"setup.py", "noxfile.py", "tasks.py", "fabfile.py", "versioneer.py"})


def is_support_path(path: str) -> bool:
    """Code that supports the project rather than being it: its documentation's
    configuration and examples, its setup script and build tooling.

    A report's environment listing, the extensions it enables and the
    project's URL are all in ``doc/conf.py`` and ``setup.py`` too, so such
    files match a report's words without holding its bug.
    """
    parts = path.replace("\\", "/").split("/")
    return (len(parts) > 1 and parts[0] in _SUPPORT_DIRS) or (
        len(parts) == 1 and parts[0] in _SUPPORT_FILES
    )
