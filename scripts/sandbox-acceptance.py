"""Real tests that need an ordinary machine pass in the sandbox (issue 23, item 2).

* thefuck's ``tests/test_conf.py::test_settings_defaults`` on the fixed code
  of dev case thefuck-4: its conftest empties ``os.environ`` (no ``HOME``),
  so ``Path.home()`` asks the passwd database for the sandbox uid;
* tornado's ``AuthTest.test_facebook_login`` on the fixed code of dev-wide
  case tornado-12: it starts an HTTP server on 127.0.0.1 and talks to it.

Each tree is extracted from the case's ``repo.tar.gz``, copied into a real
``Sandbox``, the case's gold patch applied there, then the test run with
the cached Python 3.8 env of the dev cases (``fixbugs eval`` builds it).
Needs root (the sandbox's containment) and ``../shared/bugs``. Run it from
the repository root::

    .venv/bin/python scripts/sandbox-acceptance.py [--bugs ../shared/bugs]

It prints one line per test and exits 1 if any did not pass.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fixbugs.pyenv.testenv import cached_env
from fixbugs.pyenv.testverdict import classify_run, tail
from fixbugs.sandbox import Sandbox, interpreter_paths


@dataclass(frozen=True)
class Check:
    case: str  # folder under the bugs directory
    command: str  # run with the env's python as ``python``
    runner: str  # "pytest" or "unittest", for classify_run
    why: str


CHECKS = (
    Check(
        "dev/thefuck-4",
        "python -m pytest -p no:cacheprovider tests/test_conf.py::test_settings_defaults",
        "pytest",
        "Path.home() without HOME: the sandbox uid's passwd entry",
    ),
    Check(
        "dev-wide/tornado-12",
        "python -m unittest tornado.test.auth_test.AuthTest.test_facebook_login",
        "unittest",
        "a local HTTP server on 127.0.0.1: loopback in the sandbox's network namespace",
    ),
)


async def run_check(bugs: Path, check: Check, python: Path, work: Path) -> bool:
    case = bugs / check.case
    tree = work / case.name
    tree.mkdir()
    with tarfile.open(case / "repo.tar.gz") as tar:
        tar.extractall(tree, filter="data")
    gold = json.loads((case / "gold.json").read_text())["patch"]
    with Sandbox.create(tree, base_dir=work, readonly_paths=interpreter_paths(python)) as sb:
        applied = sb.apply_patch(gold)
        if not applied.applied:
            print(f"FAIL {check.case}: the gold patch does not apply: {applied.message}")
            return False
        cmd = check.command.replace("python ", f"{python} ", 1)
        run = await sb.run(cmd, timeout_s=300)
    output = run.stdout + "\n" + run.stderr
    runner = "pytest" if check.runner == "pytest" else "unittest"
    verdict = classify_run(runner, run.returncode, output, timed_out=run.timed_out)
    ok = verdict.status == "passed"
    print(f"{'PASS' if ok else 'FAIL'} {check.case} ({check.why}): {verdict.reason}")
    if not ok:
        print(tail(output, 30))
    for note in run.notes:
        print(f"  note: {note}")
    return ok


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--bugs", type=Path, default=Path("../shared/bugs"))
    args = parser.parse_args()
    meta = json.loads((args.bugs / "dev/thefuck-4/case.json").read_text())
    bindir = cached_env(meta["python"], meta["requirements"])
    if bindir is None:
        print("no cached Python 3.8 env of the dev cases (run `fixbugs eval` once)")
        return 2
    python = bindir / "python"
    with tempfile.TemporaryDirectory(prefix="fixbugs-acceptance-") as tmp:
        results = [await run_check(args.bugs, c, python, Path(tmp)) for c in CHECKS]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
