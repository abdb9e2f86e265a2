"""Localization from reports as users write them: installed-copy frames, cut traces,
quoted code lines, string literals and typed commands, on small repositories."""

from __future__ import annotations

from fixbugs.localize.locate import static_evidence
from fixbugs.localize.rank import rank_files
from fixbugs.localize.report_signals import (
    command_evidence,
    literal_evidence,
    quoted_code_evidence,
)
from fixbugs.localize.report_text import typed_commands
from fixbugs.localize.signals import traceback_evidence
from fixbugs.localize.traceback import parse_failure, relativize

# A small CLI that corrects shell commands, one rule module per command.
REPO = {
    "shellfix/__init__.py": "",
    "shellfix/main.py": (
        "from shellfix.corrector import corrected\n\n\n"
        "def main(script):\n"
        "    for cmd in corrected(script):\n"
        "        print(cmd)\n"
    ),
    "shellfix/corrector.py": (
        "from shellfix.rules import git_push, git_push_force, man\n\n\n"
        "def corrected(script):\n"
        "    for rule in (git_push, git_push_force, man):\n"
        "        if rule.match(script):\n"
        "            yield rule.get_new_command(script)\n"
    ),
    "shellfix/rules/__init__.py": "",
    "shellfix/rules/git_push.py": (
        "def match(script):\n"
        "    return script.startswith('git push')\n\n\n"
        "def get_new_command(script):\n"
        "    parts = script.split()\n"
        "    index = parts.index('-u')\n"
        "    parts.pop(index)\n"
        "    parts.pop(index)\n"
        "    return ' '.join(parts + ['--set-upstream', 'origin', 'master'])\n"
    ),
    "shellfix/rules/git_push_force.py": (
        "def match(script):\n"
        "    return 'rejected' in script\n\n\n"
        "def get_new_command(script):\n"
        "    return script.replace('push', 'push --force')\n"
    ),
    "shellfix/rules/man.py": (
        "def match(script):\n"
        "    return script.startswith('man ')\n\n\n"
        "def get_new_command(script):\n"
        "    if 'No manual entry for' in script:\n"
        "        return [script.split()[-1] + ' --help']\n"
        "    return ['man 3 ' + script.split()[-1]]\n"
    ),
    "shellfix/config.py": (
        "import os\n\n\n"
        "def overridden():\n"
        "    return os.environ.get('SHELLFIX_OVERRIDDEN_ALIASES', '').split(',')\n"
    ),
    "tests/test_git_push.py": "from shellfix.rules.git_push import get_new_command\n",
}


def test_site_packages_and_dist_packages_frames_map_to_the_repository() -> None:
    files = set(REPO)
    for raw in (
        "/home/me/.local/lib/python3.8/site-packages/shellfix/corrector.py",
        "/usr/lib/python3/dist-packages/shellfix/corrector.py",
        "C:\\Python38\\Lib\\site-packages\\shellfix\\corrector.py",
        "/opt/venv/lib/python3.8/site-packages/shellfix-1.0-py3.8.egg/shellfix/corrector.py",
    ):
        assert relativize(raw, files) == "shellfix/corrector.py", raw
    src_layout = {"src/shellfix/corrector.py"}
    assert (
        relativize("/x/lib/python3.8/site-packages/shellfix/corrector.py", src_layout)
        == "src/shellfix/corrector.py"
    )
    # other installed packages and the standard library are not the project
    assert relativize("/x/site-packages/decorator/__init__.py", files) is None
    assert relativize("/usr/lib/python3.8/json/decoder.py", files) is None
    assert relativize("<decorator-gen-12>", files) is None


PARTIAL = """# IndexError after git push -u

```
$ git push -u
fatal: The current branch master has no upstream branch.
$ shellfix
Traceback (most recent call last):
  File "/home/me/.local/lib/python3.8/site-packages/shellfix/main.py", line 5, in main
    for cmd in corrected(script):
  File "/home/me/.local/lib/python3.8/site-packages/shellfix/corrector.py", line 7, in corrected
    yield rule.get_new_command(script)
  ...
    parts.pop(index)
IndexError: pop index out of range
```
"""


def test_a_partial_site_packages_traceback_points_at_the_repository_file() -> None:
    failure = parse_failure(PARTIAL, REPO.keys())
    paths = [f.path for f in failure.frames]
    assert paths == ["shellfix/main.py", "shellfix/corrector.py"]
    assert failure.exception_type == "IndexError"
    assert failure.truncated == frozenset({0})
    # the cut trace's innermost frame is a caller, not the failure site
    innermost = next(e for e in traceback_evidence(failure) if e.path == "shellfix/corrector.py")
    assert innermost.strength < 1.0 and "trace cut below" in innermost.reason
    # the quoted line left after the cut, and the command typed, find the rule
    ranked = rank_files(static_evidence(REPO, PARTIAL, failure, []))
    assert ranked[0].path == "shellfix/rules/git_push.py"
    assert ranked[0].lines == ((8, 9),)  # the quoted line, found at both its places


def test_quoted_code_line_alone_finds_its_file_and_line() -> None:
    report = "It crashes here:\n\n```\n    index = parts.index('-u')\nValueError\n```\n"
    (ev,) = quoted_code_evidence(report, REPO, parse_failure(report, REPO.keys()))
    assert (ev.path, ev.kind, ev.lines, ev.strength) == (
        "shellfix/rules/git_push.py",
        "quoted",
        ((7, 7),),
        1.0,
    )


def test_a_code_line_quoted_behind_a_comment_marker_finds_its_line() -> None:
    report = "expr = fix(text)\n//  index = parts.index('-u')\n// ValueError: '-u' is not in list\n"
    (ev,) = quoted_code_evidence(report, REPO, parse_failure(report, REPO.keys()))
    assert (ev.path, ev.lines) == ("shellfix/rules/git_push.py", ((7, 7),))


def test_a_piece_of_a_line_in_backticks_finds_the_line_that_holds_it() -> None:
    report = "The rule removes the wrong flag: `index = parts.index(` is looked up once.\n"
    (ev,) = quoted_code_evidence(report, REPO, parse_failure(report, REPO.keys()))
    assert (ev.path, ev.kind, ev.lines) == ("shellfix/rules/git_push.py", "quoted", ((7, 7),))
    # a name in backticks is no piece of code
    assert quoted_code_evidence("`get_new_command` fails", REPO) == []


def test_error_messages_and_names_in_the_report_match_string_literals() -> None:
    report = (
        "# man suggests man 3 for missing pages\n\nman printed `No manual entry for foo` "
        "and I had set SHELLFIX_OVERRIDDEN_ALIASES=ls."
    )
    found = {e.path: e for e in literal_evidence(report, REPO)}
    assert set(found) == {"shellfix/rules/man.py", "shellfix/config.py"}
    assert found["shellfix/rules/man.py"].lines == ((6, 6),)
    assert "no manual entry for" in found["shellfix/rules/man.py"].reason


def test_typed_commands_match_module_and_rule_names() -> None:
    report = (
        "# wrong suggestion\n\n```\n$ git push -u origin\n$ shellfix\n"
        "git push --set-upstream origin master -u origin\n```\n"
    )
    assert typed_commands(report)[:2] == ["git push -u origin", "shellfix"]
    ev = {e.path: e.strength for e in command_evidence(report, REPO)}
    assert ev["shellfix/rules/git_push.py"] == 1.0
    assert ev.get("shellfix/rules/git_push_force.py", 0.0) < 1.0
    assert "shellfix/rules/man.py" not in ev
    # backticked commands count too; a lone backticked word is a name, not a run
    inline = "When I run `git push --force` it rejects; `man` is fine."
    ev = {e.path: e.strength for e in command_evidence(inline, REPO)}
    assert max(ev, key=lambda p: ev[p]) == "shellfix/rules/git_push_force.py"
    assert "shellfix/rules/man.py" not in ev


def test_a_module_named_in_the_report_is_evidence() -> None:
    report = "[WARN] Rule git_push_force: list index out of range"
    (ev,) = command_evidence(report, REPO)
    assert ev.path == "shellfix/rules/git_push_force.py" and "named in the report" in ev.reason


def test_prose_names_reach_definitions() -> None:
    files = {
        "pkg/types.py": "class CorrectedCommand:\n    pass\n",
        "pkg/other.py": "def helper():\n    pass\n",
    }
    report = "The same corrected command is listed twice."
    ranked = rank_files(static_evidence(files, report, parse_failure(report, files.keys()), []))
    assert ranked[0].path == "pkg/types.py"
    assert any("CorrectedCommand" in r for r in ranked[0].reasons)
