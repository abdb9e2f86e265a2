"""Judging one run of the report's snippet, and the gate validation runs (pure and subprocess).

A reproduction is the reported exception raised through the script, the
output the report shows, or the snippet's own failed ``assert``; a failure
of the machine, a time-out or code that does not compile is "could not run".
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from fixbugs.inputs.snippets import Snippet
from fixbugs.stages.snippet import gate_command, judge_snippet_run, same_output

SCRIPT = ".fixbugs-snippet-abc/snippet.py"


def tb(line: str, through: str = SCRIPT) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "{through}", line 2, in <module>\n'
        '  File "calc.py", line 3, in div\n'
        f"{line}\n"
    )


NO_DIST = "The 'calc' distribution was not found and is required by the application"
RAISES = Snippet("import calc\ncalc.div(1, 0)\n", "block", "ZeroDivisionError", "division by zero")


@pytest.mark.parametrize(
    ("snippet", "rc", "out", "err", "status"),
    [
        (RAISES, 1, "", tb("ZeroDivisionError: division by zero"), "reproduced"),
        (RAISES, 1, "", tb("ZeroDivisionError: float division by zero"), "reproduced"),
        (RAISES, 1, "", tb("ZeroDivisionError: integer modulo"), "not_reproduced"),
        (RAISES, 1, "", tb("KeyError: 'a'"), "not_reproduced"),
        (RAISES, 0, "", "", "not_reproduced"),
        # raised, but not through the script (a sitecustomize, a startup hook)
        (RAISES, 1, "", tb("ZeroDivisionError: division by zero", "site.py"), "not_reproduced"),
        (RAISES, 1, "", tb("ModuleNotFoundError: No module named 'numpy'"), "could_not_run"),
        (RAISES, 1, "", tb("OSError: [Errno 101] Network is unreachable"), "could_not_run"),
        # the project's metadata is not in the interpreter the snippet ran with
        (
            Snippet("x", "block"),
            1,
            "",
            tb(f"pkg_resources.DistributionNotFound: {NO_DIST}"),
            "could_not_run",
        ),
        (
            Snippet("x", "block", "DistributionNotFound", NO_DIST),
            1,
            "",
            tb(f"pkg_resources.DistributionNotFound: {NO_DIST}"),
            "could_not_run",
        ),
        (RAISES, 127, "", "python: not found", "could_not_run"),
        (RAISES, 1, "", f'  File "{SCRIPT}", line 1\nSyntaxError: invalid syntax', "could_not_run"),
        (
            Snippet("x", "session", output="5\n<A at 0x7f01>"),
            0,
            "5\n\n<A at 0x9e2>\n",
            "",
            "reproduced",
        ),
        (Snippet("x", "session", output="5"), 0, "4\n", "", "not_reproduced"),
        (Snippet("x", "block", output="   \n"), 0, "", "", "not_reproduced"),
        (Snippet("x", "block"), 1, "", tb("AssertionError: 4 != 5"), "reproduced"),
        (Snippet("x", "block"), 1, "", tb("TypeError: nope"), "not_reproduced"),
        (Snippet("x", "block"), 0, "ok", "", "not_reproduced"),
    ],
)
def test_the_verdict_on_a_run(snippet: Snippet, rc: int, out: str, err: str, status: str) -> None:
    v = judge_snippet_run(snippet, SCRIPT, rc, out, err)
    assert v.status == status, v


def test_a_time_out_could_not_run() -> None:
    v = judge_snippet_run(RAISES, SCRIPT, -9, "", "", timed_out=True)
    assert v.status == "could_not_run"


def test_output_is_compared_line_by_line_in_order() -> None:
    assert same_output("a\n b ", "x\na\nb\ny")
    assert not same_output("b\na", "a\nb")
    assert not same_output("", "anything")


def test_python_2_reprs_in_a_report_read_as_python_3_prints_them() -> None:
    assert same_output("(<class 'a.B'>, <type 'object'>)", "(<class 'a.B'>, <class 'object'>)")
    assert same_output("u'http://a.com/x'", "'http://a.com/x'")
    assert same_output('[u"it\'s"]', '["it\'s"]')
    assert not same_output("menu'", "men'")  # a word ending in u is no prefix
    assert not same_output("u'a'", "'b'")


def test_the_gate_reads_python_2_reprs_as_python_3_prints_them(tmp_path: Path) -> None:
    wrong = Snippet("import calc\nprint(repr(calc.name()))\n", "session", output="u'a.com/x'")
    assert _gate(wrong, tmp_path, "def name():\n    return 'a.com/x'\n") == 1
    assert _gate(wrong, tmp_path, "def name():\n    return 'b.com/x'\n") == 0


def _gate(snippet: Snippet, tmp_path: Path, code: str) -> int:
    (tmp_path / "calc.py").write_text(code)
    cmd = gate_command(snippet).replace("python -c", f"{sys.executable} -c", 1)
    return subprocess.run(cmd, shell=True, cwd=tmp_path, timeout=60, capture_output=True).returncode


def test_the_gate_passes_only_once_the_snippet_stops_failing(tmp_path: Path) -> None:
    assert _gate(RAISES, tmp_path, "def div(a, b):\n    return a / b\n") == 1
    assert _gate(RAISES, tmp_path, "def div(a, b):\n    return a / b if b else 0\n") == 0
    wrong = Snippet("import calc\nprint(calc.div(4, 2))\n", "block", output="8.0")
    assert _gate(wrong, tmp_path, "def div(a, b):\n    return a * b * 1.0\n") == 1
    assert _gate(wrong, tmp_path, "def div(a, b):\n    return a / b\n") == 0
    assert not list(tmp_path.glob(".fixbugs-snippet-*"))  # its scratch folder is gone


def test_the_gate_requires_what_the_report_expects_when_it_says_so(tmp_path: Path) -> None:
    wrong = Snippet("import calc\nprint(calc.div(4, 2))\n", "block", output="8.0", expected="2.0")
    assert _gate(wrong, tmp_path, "def div(a, b):\n    return None\n") == 1  # changed, not right
    assert _gate(wrong, tmp_path, "def div(a, b):\n    return a / b\n") == 0


async def test_a_spectrum_where_every_line_scores_the_same_is_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from typing import Any, cast

    from fixbugs.localize.sbfl import SbflResult
    from fixbugs.stages import snippet_repro

    flat = SbflResult({"a.py": 1.0}, {"a.py": {1: 1.0, 2: 1.0}, "b.py": {7: 1.0}}, ("t",))
    ranked = SbflResult({"a.py": 1.0}, {"a.py": {1: 1.0, 2: 0.5}}, ("t",), ("x",))

    async def measured(*_: Any, **__: Any) -> SbflResult:
        return result

    monkeypatch.setattr(snippet_repro, "sbfl_in_fork", measured)
    none = cast(Any, None)
    result = flat
    dropped = await snippet_repro.snippet_spectrum(RAISES, [], Path("python"), none, none)
    assert not dropped.line_scores and "scores the same" in dropped.notes[0]
    result = ranked
    kept = await snippet_repro.snippet_spectrum(RAISES, [], Path("python"), none, none)
    assert kept.line_scores == ranked.line_scores


def test_the_scripts_normalize_output_as_the_judge_does() -> None:
    # the gate and the SBFL test carry the normalization as text: it is the judge's own
    from fixbugs.stages import snippet

    scope: dict[str, object] = {"re": re}
    exec(snippet._NORM_SOURCE, scope)
    samples = ["  a\n\n<A at 0x7f01>\n", "(u'x', <type 'object'>)", "menu'", '[u"it\'s"]']
    for text in samples:
        assert scope["norm"](text) == snippet._norm(text)  # type: ignore[operator]
