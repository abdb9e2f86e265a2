"""Eval test kit: a case folder of the one-line ``calc`` bug (``add`` subtracts), on disk.

The eval's tests here and the security suite's (``tests/security``) share
it; ``[tool.pytest.ini_options] pythonpath`` puts this folder on
``sys.path``. The folder follows ``shared/bugs/README.md``: ``repo.tar.gz``,
``report.md``, ``case.json`` and ``gold.json`` (the bug is line 2 of
``calc/ops.py``).
"""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["TEST_ADD", "calc_case", "pytest_report"]

TEST_ADD = "tests/test_calc.py::test_add"


def pytest_report(line: int) -> str:
    """A bug report that pastes pytest's failure of ``test_add`` (its assert at ``line``)."""
    return f"""# {TEST_ADD} fails

```
tests/test_calc.py F
    def test_add():
>       assert add(1, 2) == 3
E       assert -1 == 3
tests/test_calc.py:{line}: AssertionError
```
"""


def calc_case(
    root: Path,
    files: Mapping[str, str],
    report: str,
    *,
    name: str = "calc-1",
    python: str = "3",
    test_command: str = f"python -m pytest {TEST_ADD}",
    pass_to_pass: Sequence[str] = (),
    patch: str = "",
) -> Path:
    """The case folder ``root/name`` of a tree ``files`` whose ``test_add`` fails; ``patch``:
    the gold fix."""
    case = root / name
    case.mkdir(parents=True)
    with tarfile.open(case / "repo.tar.gz", "w:gz") as tar:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (case / "report.md").write_text(report)
    meta = {
        "id": name,
        "python": python,
        "test_command": test_command,
        "test_files": ["tests/test_calc.py"],
        "failing_tests": [TEST_ADD],
        "requirements": [],
        "pass_to_pass": list(pass_to_pass),
    }
    (case / "case.json").write_text(json.dumps(meta))
    gold = {"files": ["calc/ops.py"], "hunks": [{"file": "calc/ops.py", "start": 2, "end": 2}]}
    (case / "gold.json").write_text(json.dumps({**gold, "patch": patch}))
    return case
