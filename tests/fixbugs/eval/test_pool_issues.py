"""The pool's issue texts keep their format, so the builder can copy them as issue.md.

Each ``eval/pool/issues/<case-id>.md`` holds a user's issue: a title line, the
users' words, and a source line naming the issue it came from. ``sources.json``
says for every case whether it has such a text and why not. These checks catch
a file the builder would copy without a title or source, a text with no record
of where it came from, and maintainer text that a careless edit let in (a
"fixed in" reply, a link to the fixing pull request).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ISSUES = Path(__file__).resolve().parents[3] / "eval" / "pool" / "issues"

CASE_ID = re.compile(r"^[A-Za-z0-9_.]+(?:__[A-Za-z0-9_.-]+)?-\d+$")
TITLE = re.compile(r"^# \S.*$")
SOURCE = re.compile(
    r"^<!-- source: (https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/issues/\d+) -->$"
)
COMMENT_MARK = "**Comment:**"
FIX_PR = re.compile(r"PR #(\d+)")

# Phrases a maintainer writes about the fix, not a user about the symptom.
MAINTAINER_MARKERS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bfixed (?:in|by|via|with)\b",
        r"\bwill be fixed\b",
        r"\bresolved (?:in|by)\b",
        r"\bclos(?:ed|ing) (?:by|in|via|in favou?r)\b",
        r"\bmerged\b",
        r"\bduplicate of\b",
        r"\bthanks for (?:the|your) (?:report|contribution)\b",
        r"\breleased in\b",
        r"github\.com/[^/\s]+/[^/\s]+/pull/\d+",
        r"github\.com/[^/\s]+/[^/\s]+/commit/[0-9a-f]{7,}",
    )
]


@dataclass(frozen=True)
class Source:
    """One case's record in sources.json: where its text came from, or why it has none."""

    url: str | None
    link: str
    dropped: str
    truncated: bool
    why: str


def _load_sources() -> dict[str, Source]:
    raw = json.loads((ISSUES / "sources.json").read_text(encoding="utf-8"))
    assert isinstance(raw, dict), "sources.json must hold one object"
    out: dict[str, Source] = {}
    for case, entry in raw.items():
        assert isinstance(entry, dict), f"{case}: entry is not an object"
        url = entry.get("url")
        assert url is None or isinstance(url, str), f"{case}: url is neither a string nor null"
        if url is None:
            why = entry.get("why")
            assert isinstance(why, str) and why.strip(), f"{case}: no text, and no 'why'"
            out[case] = Source(url=None, link="", dropped="", truncated=False, why=why)
            continue
        link, dropped, truncated = entry.get("link"), entry.get("dropped"), entry.get("truncated")
        assert isinstance(link, str) and link.strip(), f"{case}: no 'link' to the fix"
        assert isinstance(dropped, str) and dropped.strip(), f"{case}: no 'dropped' line"
        assert isinstance(truncated, bool), f"{case}: 'truncated' is not a bool"
        out[case] = Source(url=url, link=link, dropped=dropped, truncated=truncated, why="")
    return out


def _texts() -> dict[str, str]:
    return {
        p.stem: p.read_text(encoding="utf-8")
        for p in sorted(ISSUES.glob("*.md"))
        if p.name != "README.md"
    }


def check_text(case: str, text: str, source: Source | None) -> list[str]:
    """Every way ``text`` breaks the format; empty when it holds."""
    problems: list[str] = []
    if not CASE_ID.match(case):
        problems.append(f"file name {case!r} is not <project>-<bug number>")
    lines = text.rstrip("\n").split("\n")
    if not TITLE.match(lines[0]):
        problems.append("first line is not '# <issue title>'")
    found = SOURCE.match(lines[-1])
    if not found:
        problems.append(
            "last line is not '<!-- source: https://github.com/OWNER/REPO/issues/N -->'"
        )
    if sum(1 for line in lines if "<!-- source:" in line) != 1:
        problems.append("more than one source line")
    body = lines[1:-1]
    if not any(line.strip() and line.strip() != COMMENT_MARK for line in body):
        problems.append("no text between the title and the source")
    fences = sum(1 for line in body if line.lstrip().startswith("```"))
    if fences % 2:
        problems.append("a code fence is left open")
    for n, line in enumerate(body, start=2):
        if line.startswith("**Comment") and line != COMMENT_MARK:
            problems.append(f"line {n}: comment marker is not exactly '{COMMENT_MARK}'")
        for marker in MAINTAINER_MARKERS:
            if marker.search(line):
                problems.append(f"line {n}: maintainer marker {marker.pattern!r}")
    if source is None:
        problems.append("no entry in sources.json")
    elif source.url is None:
        problems.append("sources.json says this case has no text")
    else:
        if found and found.group(1) != source.url:
            problems.append(f"source line {found.group(1)} differs from sources.json {source.url}")
        for pr in FIX_PR.findall(source.link):
            if re.search(rf"(?<![\w/])#{pr}\b|/pull/{pr}\b", text):
                problems.append(f"names the fixing PR #{pr}")
    return problems


def test_every_text_follows_the_format() -> None:
    sources = _load_sources()
    texts = _texts()
    assert texts, "no issue texts found"
    bad = {
        case: p for case, text in texts.items() if (p := check_text(case, text, sources.get(case)))
    }
    assert not bad, bad


def test_every_case_with_a_url_has_its_text_and_the_others_have_none() -> None:
    sources = _load_sources()
    texts = set(_texts())
    with_url = {case for case, s in sources.items() if s.url is not None}
    assert with_url == texts
    assert all(s.url is None or "/pull/" not in s.url for s in sources.values())


GOOD = (
    "# A title\n\nIt crashes.\n\n**Comment:**\nSame here.\n\n"
    "<!-- source: https://github.com/o/r/issues/7 -->\n"
)
GOOD_SOURCE = Source(
    url="https://github.com/o/r/issues/7",
    link="PR #9 says fixes #7",
    dropped="none",
    truncated=False,
    why="",
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD.replace("# A title\n", "A title\n"), "first line"),
        (GOOD.replace("<!-- source: https://github.com/o/r/issues/7 -->\n", ""), "last line"),
        (GOOD.replace("Same here.", "Fixed in 1.2, thanks!"), "maintainer marker"),
        (GOOD.replace("Same here.", "See https://github.com/o/r/pull/9"), "maintainer marker"),
        (GOOD.replace("Same here.", "Probably #9 helps."), "fixing PR #9"),
        (GOOD.replace("It crashes.", "```\nTraceback"), "code fence"),
        (GOOD.replace("**Comment:**", "**Comment**:"), "comment marker"),
        (GOOD.replace("issues/7 -->", "issues/8 -->"), "differs from sources.json"),
    ],
)
def test_a_broken_text_is_caught(text: str, expected: str) -> None:
    assert check_text("proj-1", GOOD, GOOD_SOURCE) == []
    assert any(expected in p for p in check_text("proj-1", text, GOOD_SOURCE))


def test_a_text_without_a_record_is_caught() -> None:
    assert any("no entry" in p for p in check_text("proj-1", GOOD, None))
    assert any("not <project>" in p for p in check_text("proj one", GOOD, GOOD_SOURCE))
