"""A pytest warnings summary is not the bug's evidence, with its header or without it.

youtube-dl's test output lists 35 warnings its extractors raise on import,
each with a path, a line and the source line; a pasted output that lost the
section's header (``[... 2164 lines omitted ...]``) made those files the
top suspects: "the report names the file", "line 48 is quoted in the
report". A warning Python itself printed (no pytest "where" line) may be the
report's subject and stays.
"""

from __future__ import annotations

import pytest

from fixbugs.localize.locate import static_evidence
from fixbugs.localize.rank import rank_files
from fixbugs.localize.regions import suspicious_regions
from fixbugs.localize.report_text import without_warning_entries
from fixbugs.localize.traceback import parse_failure

ENTRIES = (
    "pkg/extractor/vube.py:48\n"
    "  /home/u/proj/pkg/extractor/vube.py:48: DeprecationWarning: invalid escape sequence \\.\n"
    "    'thumbnail': 're:^http://frame\\.vube\\.com/snap/',\n"
    "\n"
    "pkg/extractor/viidea.py:97\n"
    "pkg/extractor/viidea.py:108\n"
    "  /home/u/proj/pkg/extractor/viidea.py:97: DeprecationWarning: invalid escape sequence \\.\n"
    "    'thumbnail': 're:http://.*\\.jpg',\n"
    "\n"
    "tests/test_interp.py::test_call\n"
    "  /home/user/proj/pkg/compat.py:12: PendingDeprecationWarning: the imp module is deprecated\n"
    "    import imp\n"
    "\n"
    "-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html\n"
)
HEAD = "=============================== warnings summary ===============================\n"
TAIL = (
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_interp.py::test_call - KeyError: 'call'\n"
)
REPO = {
    "pkg/__init__.py": "",
    "pkg/interp.py": (
        "class Interpreter:\n"
        "    def call(self, name, args):\n"
        "        return self._functions[name](*args)\n"
    ),
    "pkg/compat.py": "import imp\n",
    "pkg/extractor/__init__.py": "",
    "pkg/extractor/vube.py": "\n" * 47
    + "    'thumbnail': 're:^http://frame\\.vube\\.com/snap/',\n",
    "pkg/extractor/viidea.py": "\n" * 96 + "    'thumbnail': 're:http://.*\\.jpg',\n",
    "tests/test_interp.py": "from pkg.interp import Interpreter\n\ndef test_call():\n    pass\n",
}


@pytest.mark.parametrize("head", [HEAD, "[... 2164 lines omitted ...]\n"], ids=["header", "cut"])
def test_every_entry_goes_and_the_rest_stays(head: str) -> None:
    kept = without_warning_entries("collected 1 item\n" + head + ENTRIES + TAIL)
    assert "vube" not in kept and "viidea" not in kept and "imp" not in kept.split()
    assert "warnings summary" not in kept and "docs.pytest.org" not in kept
    assert kept.startswith("collected 1 item\n") and kept.endswith("KeyError: 'call'")


def test_a_warning_python_printed_itself_stays() -> None:
    text = (
        "$ python -c 'import pkg'\n"
        "/home/user/proj/pkg/compat.py:1: DeprecationWarning: the imp module is deprecated\n"
        "  import imp\n"
    )
    assert without_warning_entries(text) == text


def test_a_report_without_entries_is_returned_as_it_is() -> None:
    text = "pkg/interp.py:3\nsomething else entirely\n"
    assert without_warning_entries(text) is text


@pytest.mark.parametrize("head", [HEAD, "[... 2164 lines omitted ...]\n"], ids=["header", "cut"])
def test_the_warned_files_are_no_suspects(head: str) -> None:
    report = "# tests/test_interp.py::test_call fails\n\n```\n" + head + ENTRIES + TAIL + "```\n"
    failure = parse_failure(report, REPO.keys())
    ranked = rank_files(static_evidence(REPO, report, failure, ["tests/test_interp.py::test_call"]))
    assert ranked[0].path == "pkg/interp.py"
    for rf in ranked:
        if "extractor" in rf.path:
            assert not any("quoted" in r or "names the file" in r for r in rf.reasons), rf
    regions = suspicious_regions(REPO, ranked, report=report)
    assert all("extractor" not in r.path for r in regions if "quotes" in " ".join(r.reasons))
