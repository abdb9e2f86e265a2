"""A report's environment listing is not evidence; support files rank low on words alone."""

from __future__ import annotations

import textwrap

from fixbugs.index.paths import is_support_path
from fixbugs.localize.evidence import FileEvidence
from fixbugs.localize.rank import rank_files
from fixbugs.localize.report_text import evidence_text, without_environment

REPORT = textwrap.dedent(
    """
    **Describe the bug**
    Napoleon drops the type of `x1, x2`.

    **Environment info**
    - OS: macOS
    - Sphinx extensions:
    ```
    extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]
    ```

    **Additional context**
    Same with numpydoc.
    """
)


def test_the_environment_section_goes_and_the_next_section_stays() -> None:
    text = without_environment(REPORT)
    assert "sphinx.ext.autodoc" not in text and "macOS" not in text
    assert "Napoleon drops the type" in text and "Same with numpydoc." in text


def test_a_versions_printout_in_details_goes_up_to_its_end() -> None:
    report = (
        "Wrong result.\n\n<details><summary>Output of <tt>xr.show_versions()</tt></summary>\n"
        "INSTALLED VERSIONS\n------\npython: 3.8\nxarray: 0.16\n</details>\n\nMore words.\n"
    )
    text = evidence_text(report)
    assert "INSTALLED" not in text and "xarray: 0.16" not in text
    assert "Wrong result." in text and "More words." in text


def test_a_report_without_such_a_section_is_unchanged() -> None:
    report = "The environment variable HOME is ignored\n\n```\n$ env\n```\n"
    assert without_environment(report) == report


def test_support_paths() -> None:
    assert is_support_path("doc/conf.py") and is_support_path("setup.py")
    assert is_support_path("examples/plot.py")
    assert not is_support_path("sphinx/setup.py") and not is_support_path("six.py")
    assert not is_support_path("pkg/doc/conf.py")


def test_a_support_file_ranks_below_code_on_words_but_not_when_the_failure_ran_in_it() -> None:
    words = [
        FileEvidence("doc/conf.py", "literal", 1.0, "string 'sphinx.ext.napoleon'"),
        FileEvidence("sphinx/ext/napoleon/docstring.py", "bm25", 1.0, "BM25"),
    ]
    assert rank_files(words)[0].path == "sphinx/ext/napoleon/docstring.py"
    ran = [*words, FileEvidence("setup.py", "traceback", 1.0, "frame", ((3, 3),))]
    assert rank_files(ran)[0].path == "setup.py"
