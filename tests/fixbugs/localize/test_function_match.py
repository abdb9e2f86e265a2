"""Which function a report's identifiers point at, and which lines of a long one."""

from __future__ import annotations

import textwrap

from fixbugs.localize.evidence import FileEvidence
from fixbugs.localize.function_match import (
    ReportIdentifiers,
    best_lines,
    docstring_lines,
    function_matches,
)
from fixbugs.localize.rank import RankedFile
from fixbugs.localize.regions import function_spans, suspicious_regions

MODULE = textwrap.dedent(
    '''
    class ModuleDocumenter:
        def get_object_members(self, want_all):
            """Return the members; every member when __all__ is not given."""
            members = self.get_module_members()
            if want_all:
                if not self.__all__:
                    return True, list(members.values())
            return False, []

        def sort_members(self, documenters, order):
            """Sort members by their place in the module's source."""
            if order == "bysource":
                documenters.sort(key=lambda e: e[0].name)
            return documenters

        def add_content(self, more_content):
            """Add the module's docstring, then its members."""
            self.add_line("", "<autodoc>")
            return more_content
    '''
)

REPORT = textwrap.dedent(
    """
    autodoc: empty __all__ attribute is ignored

    ```
    # example.py
    __all__ = []
    ```
    All members are shown, sorted as usual. Expected: no members, since `__all__` is empty.
    """
)


def _names(text: str, report: str) -> list[str]:
    spans = function_spans(text)
    ids = ReportIdentifiers.of(report)
    matches = function_matches(text.splitlines(), spans, ids, docstring_lines(text))
    return [spans[i][0] for i, _ in matches]


def test_a_rare_identifier_the_report_writes_picks_its_function_over_shared_words() -> None:
    assert _names(MODULE, REPORT)[0] == "ModuleDocumenter.get_object_members"


def test_identifiers_in_docstrings_do_not_count() -> None:
    # "source" and "docstring" are in docstrings only
    assert _names(MODULE, "the docstring of the source is wrong") == []


def test_code_like_identifiers_weigh_more_than_prose_words() -> None:
    ids = ReportIdentifiers.of("the `order` of members: want_all is ignored")
    assert ids.weight("want_all") > ids.weight("members")
    assert ids.weight("order") == ids.weight("want_all")  # written as inline code


def test_a_long_function_is_narrowed_to_its_lines_that_use_the_reports_identifiers() -> None:
    body = ["def long():", '    """Docstring that says parse_state parse_state."""']
    body += [f"    x{i} = step({i})" for i in range(40)]
    body[30] = "    parse_state = read(x20)"
    lines = body
    ids = ReportIdentifiers.of("parse_state is wrong")
    docs = docstring_lines("\n".join(lines))
    a, b = best_lines(lines, 1, len(lines), ids, width=15, docs=docs)
    assert a <= 31 <= b and b - a + 1 == 15
    # with nothing to match, the window starts past the docstring
    none = ReportIdentifiers.of("nothing here")
    assert best_lines(lines, 1, len(lines), none, width=15, docs=docs) == (3, 17)


def test_the_region_of_a_file_without_line_evidence_is_the_identifiers_function() -> None:
    ranked = [RankedFile("pkg/autodoc.py", 2.0, ("defines ModuleDocumenter",))]
    regions = suspicious_regions({"pkg/autodoc.py": MODULE}, ranked, report=REPORT)
    assert regions[0].function == "ModuleDocumenter.get_object_members"
    assert any("uses the report's identifiers" in r for r in regions[0].reasons)


def test_comments_and_the_def_line_do_not_choose_the_lines() -> None:
    lines = ["def parse_state(x):"] + [f"    y{i} = step({i})" for i in range(30)]
    lines[5] = "    # parse_state parse_state parse_state"
    lines[25] = "    value = read(parse_state_table)"
    ids = ReportIdentifiers.of("`parse_state_table` is read wrong by parse_state")
    a, b = best_lines(lines, 1, len(lines), ids, width=15)
    assert a <= 26 <= b


def test_a_private_namesake_is_where_a_public_wrapper_works() -> None:
    text = textwrap.dedent(
        """
        def _hermite_normal_form(A):
            rows = A.shape[0]
            return reduce_rows(A, rows)

        def hermite_normal_form(A, D=None):
            return _hermite_normal_form(A)
        """
    )
    names = _names(text, "`hermite_normal_form(A)` removes rows it should keep")
    assert names[0] == "_hermite_normal_form"


def test_a_name_the_reports_own_code_defines_earns_no_name_bonus() -> None:
    text = textwrap.dedent(
        """
        def setup(app):
            app.add_config_value("value", None, "env")

        def check_anchor(response, anchor):
            return anchor in response
        """
    )
    spans = function_spans(text)

    def setup_score(report: str) -> float:
        ids = ReportIdentifiers.of(report)
        return dict(function_matches(text.splitlines(), spans, ids))[0]

    defines = "conf.py:\n```\ndef setup(app):\n    app.connect('build', on_build)\n```"
    calls = "conf.py:\n```\nsetup(app)\napp.connect('build', on_build)\n```"
    assert ReportIdentifiers.of(defines).defined == {"setup"}
    assert setup_score(calls) > setup_score(defines) + 4  # the bonus, damped a little


def test_a_literal_that_is_a_bare_name_points_less_than_a_message() -> None:
    # a setting's registration names it in a string; the check that reads it prints
    # the message the report shows
    text = textwrap.dedent(
        """
        def setup(app):
            app.add_config_value("linkcheck_anchors", True, None)
            app.add_config_value("linkcheck_anchors_ignore", [], None)

        def check(self, anchor):
            config = self.app.config
            if config.linkcheck_anchors and anchor not in config.linkcheck_anchors_ignore:
                raise Broken("Anchor '%s' not found" % anchor)
        """
    )
    lines = ((3, 3), (4, 4), (9, 9))
    ev = FileEvidence("pkg/linkcheck.py", "literal", 1.0, "literals the report shows", lines)
    ranked = [RankedFile("pkg/linkcheck.py", 1.25, ("literals",), evidence=(ev,))]
    report = "With linkcheck_anchors on, linkcheck_anchors_ignore unset: Anchor 'x' not found"
    region = suspicious_regions({"pkg/linkcheck.py": text}, ranked, report=report)[0]
    assert region.function == "check"
