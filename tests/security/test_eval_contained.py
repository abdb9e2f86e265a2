"""The eval runs a case's code only in the sandbox: the scorer and ``--localize-only``.

A case is as hostile as any repository: its tests run when the scorer
redoes validation and when the eval reproduces the bug. Both ran them on
the host (``localize/process.run_command``); they now run through the
executor (:mod:`fixbugs.sandbox.executor`), a sandbox of the case's tree.
Each test builds a case whose test module writes a marker on the host, and
shows that the marker never appears while the case's tests still ran (the
fix validates, the bug is reproduced).
"""

from __future__ import annotations

from pathlib import Path

from evalkit import TEST_ADD, calc_case, pytest_report
from hostile import NEEDS_NAMESPACES, PY, host_has

from fixbugs.eval.run import load_cases, run_eval
from fixbugs.eval.score import validate_patch

pytestmark = NEEDS_NAMESPACES

REPORT = pytest_report(6)
FIX = """--- a/calc/ops.py
+++ b/calc/ops.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


def hostile_case(root: Path, marker: Path) -> Path:
    """A case whose test module, when run, writes ``marker`` (and goes on if it cannot)."""
    plant = (
        "import pathlib\n"
        "try:\n"
        f"    pathlib.Path({str(marker)!r}).write_text('ran on the host')\n"
        "except OSError:\n"
        "    pass\n"
    )
    files = {
        "calc/__init__.py": "",
        "calc/ops.py": "def add(a, b):\n    return a - b\n",
        "tests/test_calc.py": plant
        + "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    }
    return calc_case(
        root,
        files,
        REPORT,
        test_command="python -m pytest -s tests/test_calc.py::test_add",
        pass_to_pass=[TEST_ADD],
        patch=FIX,
    )


def _marker(tmp_path: Path) -> Path:
    host = tmp_path / "host"
    host.mkdir()
    return host / "MARK-ran-on-host"


async def test_the_scorer_runs_a_cases_tests_in_the_sandbox(tmp_path: Path) -> None:
    marker = _marker(tmp_path)
    case = hostile_case(tmp_path / "cases", marker)
    score = await validate_patch(case, FIX, Path(PY).parent)
    assert score.validated, score  # the tests ran, and the fix holds there
    assert not host_has(marker)


async def test_localize_only_reproduces_a_case_in_the_sandbox(tmp_path: Path) -> None:
    marker = _marker(tmp_path)
    hostile_case(tmp_path / "cases", marker)
    [result] = await run_eval(
        load_cases(tmp_path / "cases"), python_env=lambda python, reqs: Path(PY).parent
    )
    assert result.reproduction_confirmed is True  # the case's test ran, and failed
    assert not host_has(marker)
