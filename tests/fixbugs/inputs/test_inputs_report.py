"""Bug reports: markdown, plain text, GitHub issue JSON in its shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixbugs.errors import InputError
from fixbugs.inputs import load_report


def test_markdown_title_and_body(tmp_path: Path) -> None:
    p = tmp_path / "bug.md"
    p.write_text("# add() returns the difference\n\nCalling add(2, 2) gives 0.\n")
    r = load_report(p)
    assert (r.title, r.body, r.format) == (
        "add() returns the difference",
        "Calling add(2, 2) gives 0.",
        "markdown",
    )
    assert r.comments == () and r.source == p


@pytest.mark.parametrize("fence", ["```", "~~~~"])
def test_a_comment_in_a_pasted_script_is_no_title(tmp_path: Path, fence: str) -> None:
    p = tmp_path / "bug.md"
    script = (
        f"{fence}python\nfrom calc import add\n# Correct: prints 4\nprint(add(2, 2))\n{fence}\n"
    )
    p.write_text("Sum of two numbers is zero\nI think this is a bug.\n\n" + script)
    r = load_report(p)
    assert r.title == "Sum of two numbers is zero"
    assert "# Correct: prints 4" in r.body and r.body.startswith("I think")
    # a heading after the script is still the title, and the script stays whole in the body
    p.write_text("Some words first.\n\n" + script + "\n# add() gives 0\n\nMore.\n")
    r = load_report(p)
    assert r.title == "add() gives 0" and script.strip() in r.body


def test_plain_text_first_line_is_the_title(tmp_path: Path) -> None:
    p = tmp_path / "bug.txt"
    p.write_text("\n  Crash on empty input\nTraceback (most recent call last):\n  ...\n")
    r = load_report(p)
    assert (
        r.title == "Crash on empty input" and r.body.startswith("Traceback") and r.format == "text"
    )


def test_gh_issue_view_json_with_comments(tmp_path: Path) -> None:
    p = tmp_path / "issue.json"
    issue = {
        "title": "Timeout in checkout",
        "body": "Checkout hangs for 30 s.",
        "comments": [
            {"author": {"login": "alice"}, "body": "Seen in prod too"},
            {"author": {"login": "bob"}, "body": "  "},
            "plain comment",
        ],
    }
    p.write_text(json.dumps(issue))
    r = load_report(p)
    assert r.format == "github" and r.title == "Timeout in checkout"
    assert r.comments == ("alice: Seen in prod too", "plain comment")
    assert "Seen in prod too" in r.text


@pytest.mark.parametrize("shape", ["wrapped", "list"])
def test_rest_api_shape_with_comments_beside(tmp_path: Path, shape: str) -> None:
    issue = {"title": "Bad total", "body": "Total is off by one", "comments": 2, "number": 7}
    comments = [{"user": {"login": "carol"}, "body": "Repro attached"}, {"body": "+1"}]
    doc = {"issue": issue, "comments": comments} if shape == "wrapped" else [issue, *comments]
    p = tmp_path / "issue.json"
    p.write_text(json.dumps(doc))
    r = load_report(p)
    assert r.title == "Bad total" and r.comments == ("carol: Repro attached", "+1")


def test_rest_api_issue_alone(tmp_path: Path) -> None:
    p = tmp_path / "issue.json"
    p.write_text(json.dumps({"title": "T", "body": None, "comments": 5}))
    r = load_report(p)
    assert (r.title, r.body, r.comments) == ("T", "", ())


def test_truncated_json_names_file_and_position(tmp_path: Path) -> None:
    p = tmp_path / "issue.json"
    p.write_text('{"title": "x", "body": "unterminated')
    with pytest.raises(InputError, match=r"issue\.json is not valid JSON \(line 1, column \d+"):
        load_report(p)


def test_markdown_titled_in_brackets_is_markdown_not_json(tmp_path: Path) -> None:
    p = tmp_path / "report.md"
    p.write_text("[bug] mean fails with boolean weights\n\nSteps: call `mean`.\n")
    r = load_report(p)
    assert r.title == "[bug] mean fails with boolean weights" and r.body.startswith("Steps")


def test_missing_report(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_report(tmp_path / "nope.md")
