"""A link to a file on a code host names the file and its lines; a site link is no literal."""

from __future__ import annotations

from fixbugs.localize.evidence import FileEvidence
from fixbugs.localize.names import path_evidence
from fixbugs.localize.rank import RankedFile, rank_files
from fixbugs.localize.regions import suspicious_regions
from fixbugs.localize.report_signals import literal_evidence, literal_fragments

FILES = {
    "xarray/core/nanops.py": "\n".join(
        ["import numpy as np", "", "", "def _maybe_null_out(result, axis, mask, min_count=1):"]
        + [f"    step{i} = {i}" for i in range(40)]
        + ["    return result"]
    ),
    "xarray/core/dataarray.py": "class DataArray:\n    pass\n",
}
LINK = (
    "The check is here: https://github.com/pydata/xarray/blob/1be777fe725a85b8cc0f65a2"
    "bc41f4bc2ba18043/xarray/core/nanops.py#L30-L32 and it is wrong for tuples."
)


def test_a_link_with_a_line_anchor_is_path_evidence_with_those_lines() -> None:
    (ev,) = path_evidence(LINK, FILES.keys())
    assert (ev.path, ev.kind, ev.lines) == ("xarray/core/nanops.py", "path", ((30, 32),))
    assert "links to the file xarray/core/nanops.py, line 30" in ev.reason


def test_a_link_without_an_anchor_names_the_file_only() -> None:
    text = "see https://gitlab.com/o/r/-/blob/main/xarray/core/nanops.py for the code"
    (ev,) = path_evidence(text, FILES.keys())
    assert ev.path == "xarray/core/nanops.py" and ev.lines == ()


def test_the_links_lines_are_the_region() -> None:
    ranked = rank_files(path_evidence(LINK, FILES.keys()))
    region = suspicious_regions(FILES, ranked, report=LINK)[0]
    assert region.path == "xarray/core/nanops.py"
    assert region.start <= 30 and region.end >= 32 and region.end - region.start < 20


def test_a_site_link_is_not_a_literal_of_the_report() -> None:
    assert literal_fragments("https://github.com/sympy/sympy/issues") == []
    files = {"release/fabfile.py": 'URL = "https://github.com/sympy/sympy/releases"\n'}
    assert literal_evidence("See https://github.com/sympy/sympy/releases", files) == []


def test_a_link_to_a_def_line_is_the_whole_function_narrowed_by_the_reports_words() -> None:
    text = FILES["xarray/core/nanops.py"].replace("    step30 = 30", "    count = mask.sum(axis)")
    link = (
        "https://github.com/pydata/xarray/blob/1be777f/xarray/core/nanops.py#L4\n"
        "`mask.sum(axis)` fails when axis is a tuple"
    )
    files = {**FILES, "xarray/core/nanops.py": text}
    ranked = rank_files(path_evidence(link, files.keys()))
    region = suspicious_regions(files, ranked, report=link)[0]
    # not the def line's first lines: the function's lines the report's code names
    assert region.function == "_maybe_null_out" and region.start <= 34 <= region.end
    assert region.start > 4


def test_a_line_a_link_names_in_the_second_file_beats_a_function_the_first_holds_by_name() -> None:
    files = {
        "pkg/api.py": "def entry(x):\n    return helper(x)\n",
        "pkg/core.py": "\n".join(f"def f{i}():\n    return {i}\n" for i in range(10)),
    }
    ranked = [
        RankedFile(
            "pkg/api.py",
            2.8,
            ("the report's code calls entry",),
            evidence=(
                FileEvidence("pkg/api.py", "call", 0.4, "the report's code calls entry", ((1, 2),)),
            ),
        ),
        RankedFile(
            "pkg/core.py",
            2.4,
            ("the report links to line 8",),
            evidence=(
                FileEvidence("pkg/core.py", "path", 1.0, "the report links to line 8", ((8, 8),)),
            ),
        ),
    ]
    region = suspicious_regions(files, ranked, report="entry(1) is wrong, see core.py#L8")[0]
    assert (region.path, region.function) == ("pkg/core.py", "f2")
