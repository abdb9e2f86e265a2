"""Reproduction from the report's own code: run a :class:`~fixbugs.inputs.snippets.Snippet`.

The script is written into the workspace copy under a name the repository
cannot know beforehand (a fresh ``.fixbugs-snippet-*`` folder, made and
filled through a descriptor: the repository's code may have run in that
copy before, see :class:`~fixbugs.sandbox.untrusted.HostFolder`) and run as
``python SCRIPT`` through the workspace's executor (the sandbox) with the
project's interpreter, the repository root first on ``PYTHONPATH``, for a
bounded time; the folder is removed afterwards.

:func:`judge_snippet_run` (pure) says what the run showed. A reproduction
is a run that raises the reported exception type (and message, when the
report gives one) in a traceback that passes through the script; or prints
the output the report shows (the output it calls wrong); or, when the report
shows neither, fails the snippet's own ``assert``. A run that ended on a
failure of the machine (:func:`fixbugs.pyenv.failures.environment_signature`),
that timed out or that does not compile is "could not run", never a
reproduction.

Validation needs a command it can run in a fresh fork, where the scratch
file is not: :func:`gate_command` is one self-contained ``python -c``
command that writes the script again, runs it the same way and exits 0 only
when the snippet ran clean, no longer prints the output the report shows and,
when the report says what it should print (``Snippet.expected``), prints that.
That gate is deliberately plainer than the reproduction's judgement: a fix
must make the snippet stop failing, not merely fail differently.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fixbugs.inputs.snippets import Snippet
from fixbugs.pyenv.failures import environment_signature
from fixbugs.pyenv.raised import final_exception
from fixbugs.sandbox.executor import Workspace
from fixbugs.sandbox.untrusted import HostFolder, remove_tree

__all__ = [
    "SCRATCH_PREFIX",
    "SnippetRun",
    "SnippetVerdict",
    "gate_command",
    "judge_snippet_run",
    "run_snippet",
    "same_output",
    "scratch_dir",
    "write_snippet_test",
]

SCRATCH_PREFIX = ".fixbugs-snippet-"
SCRIPT_NAME = "snippet.py"
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
# Python 2's reprs, as old reports show them, read as Python 3 prints them
_PY2_TEXT = re.compile(r"(?<![\w'\"])u(?=['\"])")
_PY2_TYPE = re.compile(r"<type '")


@dataclass(frozen=True, slots=True)
class SnippetVerdict:
    """What one run of a snippet showed, and why, in one line."""

    status: Literal["reproduced", "not_reproduced", "could_not_run"]
    reason: str


@dataclass(frozen=True, slots=True)
class SnippetRun:
    """A snippet's run: the verdict, its exit status and the last of its output."""

    snippet: Snippet
    verdict: SnippetVerdict
    returncode: int | None
    output: str  # stdout then stderr, the copy's paths made relative


def _norm(text: str) -> str:
    """Output as compared: lines stripped, blank lines dropped, object addresses masked,
    Python 2's reprs (``u'x'``, ``<type 'int'>``) as Python 3 writes them.

    :data:`_NORM_SOURCE` is the same normalization as text, for the gate and the SBFL test.
    """
    lines = (_py3(_ADDRESS.sub("0x?", line.strip())) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _py3(line: str) -> str:
    return _PY2_TYPE.sub("<class '", _PY2_TEXT.sub("", line))


def same_output(shown: str, printed: str) -> bool:
    """The run printed what the report shows (each line, in order, whitespace aside)."""
    want = _norm(shown)
    return bool(want) and want in _norm(printed)


def _same_message(report: str, seen: str) -> bool:
    a, b = " ".join(report.split()), " ".join(seen.split())
    short, long = sorted((a, b), key=len)
    return a == b or (len(short) >= 8 and short in long)


def judge_snippet_run(
    snippet: Snippet,
    script: str,
    returncode: int | None,
    stdout: str,
    stderr: str,
    *,
    timed_out: bool = False,
) -> SnippetVerdict:
    """The verdict on one run of ``snippet`` written as ``script`` (see the module docstring)."""
    if timed_out or returncode is None:
        return SnippetVerdict("could_not_run", "the snippet ran past its time limit")
    if returncode in (126, 127):
        return SnippetVerdict("could_not_run", f"the interpreter did not start (exit {returncode})")
    final = final_exception(stderr) if returncode != 0 else None
    if final is not None:
        env = environment_signature(stderr)
        if env is not None:
            return SnippetVerdict(
                "could_not_run", f"the failure comes from the environment, not the code: {env}"
            )
        if final[0].rsplit(".", 1)[-1] in ("SyntaxError", "IndentationError") and script in stderr:
            return SnippetVerdict(
                "could_not_run", "the snippet does not compile under the project's Python"
            )
    kind = final[0].rsplit(".", 1)[-1] if final else None
    said = f"{kind}: {final[1]}"[:160] if final and final[1] else str(kind)
    through = script in stderr  # the traceback passes through the script
    if snippet.raises:
        if kind == snippet.raises and through:
            if not snippet.message or _same_message(snippet.message, final[1] if final else ""):
                return SnippetVerdict("reproduced", f"raises {said}, as reported")
            return SnippetVerdict(
                "not_reproduced", f"raises {kind} but not the reported message ({said})"
            )
        if kind is not None:
            return SnippetVerdict(
                "not_reproduced", f"raises {said}, not the reported {snippet.raises}"
            )
        return SnippetVerdict(
            "not_reproduced", f"exits {returncode} without the reported {snippet.raises}"
        )
    if snippet.output is not None:
        if same_output(snippet.output, stdout + "\n" + stderr):
            return SnippetVerdict("reproduced", "prints the output the report shows")
        tail = f" (it raises {said})" if kind else ""
        return SnippetVerdict("not_reproduced", "does not print the output the report shows" + tail)
    if kind == "AssertionError" and through:
        return SnippetVerdict("reproduced", f"the snippet's own assertion fails ({said})")
    if kind is not None:
        return SnippetVerdict("not_reproduced", f"raises {said}, which the report does not show")
    return SnippetVerdict(
        "not_reproduced", f"runs (exit {returncode}) and the report shows nothing to compare"
    )


def scratch_dir(root: Path, files: Mapping[str, str]) -> Path:
    """A fresh folder of the copy holding ``files`` (name -> text), that the sandboxed uid
    may read (and write: scripts do).

    Made and filled through a descriptor, before the uid can write it: the
    copy may be one where the repository's code already ran (an earlier
    snippet), so no path in it is followed (:class:`HostFolder`).
    """
    with HostFolder.make(root, prefix=SCRATCH_PREFIX, mode=0o700) as d:
        for name, text in files.items():
            d.write(name, text.encode("utf-8"), mode=0o644)
        d.chmod(0o777)
        return d.path


def _python_path(root: Path, env: Mapping[str, str] | None) -> str:
    rest = (env or {}).get("PYTHONPATH")
    return os.pathsep.join([str(root), *([rest] if rest else [])])


async def run_snippet(
    snippet: Snippet,
    workspace: Workspace,
    *,
    python: str,
    env: Mapping[str, str] | None,
    timeout_s: float,
) -> SnippetRun:
    """Write ``snippet`` into the copy, run it there once, judge it, remove it."""
    root = workspace.root
    d = scratch_dir(root, {SCRIPT_NAME: snippet.source})
    try:
        rel = str((d / SCRIPT_NAME).relative_to(root))
        run = await workspace.run(
            [python, rel],
            timeout_s=timeout_s,
            env={**(env or {}), "PYTHONPATH": _python_path(root, env)},
        )
    finally:
        remove_tree(d)  # never follows a link the script left there
    # the snippet's output is the repository code's to write (up to the sandbox's cap):
    # read in a worker thread, off the service's event loop
    verdict = await asyncio.to_thread(
        judge_snippet_run,
        snippet,
        rel,
        run.returncode,
        run.stdout,
        run.stderr,
        timed_out=run.timed_out,
    )
    output = (run.stdout + "\n" + run.stderr).replace(f"{root}/", "")
    return SnippetRun(snippet, verdict, run.returncode, output)


# :func:`_norm` as text, for the scripts below (run under the project's Python, any >= 3.6)
_NORM_SOURCE = r"""
def norm(t):
    lines = (re.sub(r"\b0x[0-9a-fA-F]+\b", "0x?", x.strip()) for x in t.splitlines())
    lines = (re.sub(r"(?<![\w'\"])u(?=['\"])", "", x) for x in lines)
    lines = (x.replace("<type '", "<class '") for x in lines)
    return "\n".join(x for x in lines if x)
"""

# Runs under any Python >= 3.6 as ``python -c``: the script again, in a fresh folder of the
# fork, run as the reproduction ran it; exit 0 only when it ran clean, no longer prints
# the output the report shows, and prints what the report expects when it says so.
_GATE = r"""
import base64, json, os, re, shutil, subprocess, sys, tempfile
spec = json.loads(base64.b64decode(sys.argv[1]).decode("utf-8"))
{norm}
d = tempfile.mkdtemp(prefix=".fixbugs-snippet-", dir=".")
try:
    p = os.path.join(d, "snippet.py")
    with open(p, "w", encoding="utf-8") as f:
        f.write(spec["source"])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd()] + [x for x in [env.get("PYTHONPATH")] if x])
    r = subprocess.run([sys.executable, p], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
finally:
    shutil.rmtree(d, ignore_errors=True)
out, err = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
sys.stdout.write(out)
sys.stderr.write(err)
if r.returncode != 0:
    sys.stderr.write("\nthe report's snippet still fails (exit %d)\n" % r.returncode)
    sys.exit(1)
shown = spec.get("output")
if shown is not None and norm(shown) and norm(shown) in norm(out + "\n" + err):
    sys.stderr.write("\nthe report's snippet still prints the output the report shows\n")
    sys.exit(1)
wanted = spec.get("expected")
if wanted is not None and norm(wanted) and norm(wanted) not in norm(out + "\n" + err):
    sys.stderr.write("\nthe report's snippet does not print what the report expects\n")
    sys.exit(1)
"""


def gate_command(snippet: Snippet) -> str:
    """One shell command, runnable in any fresh copy: exit 0 once the snippet stops failing."""
    spec = {"source": snippet.source, "output": snippet.output, "expected": snippet.expected}
    blob = base64.b64encode(json.dumps(spec).encode()).decode()
    return f"python -c {shlex.quote(_GATE.replace('{norm}', _NORM_SOURCE).strip())} {blob}"


# The snippet as one pytest test, for SBFL's coverage run (run_sbfl runs pytest files):
# it runs in the test's own process, so coverage sees the repository's lines it reaches.
_AS_TEST = r'''"""FixBugs: the report's snippet as one test (SBFL's failing spectrum)."""
import base64, contextlib, io, json, os, re, runpy

SPEC = json.loads(base64.b64decode("{blob}").decode("utf-8"))


{norm}


def test_snippet():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "{script}")
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        assert e.code in (None, 0), "the snippet exits %r" % (e.code,)
    shown = SPEC.get("output")
    still = shown is not None and norm(shown) and norm(shown) in norm(buf.getvalue())
    assert not still, "the snippet prints the output the report shows"
    wanted = SPEC.get("expected")
    missing = wanted is not None and norm(wanted) and norm(wanted) not in norm(buf.getvalue())
    assert not missing, "the snippet does not print what the report expects"
'''
SNIPPET_TEST = "test_fixbugs_snippet.py"


def write_snippet_test(snippet: Snippet, root: Path) -> str:
    """Write the snippet and its test into a fresh scratch folder of ``root``; the test's path.

    The folder is the caller's to remove (it lives in a throwaway fork).
    """
    blob = base64.b64encode(
        json.dumps({"output": snippet.output, "expected": snippet.expected}).encode()
    ).decode()
    test = (
        _AS_TEST.replace("{norm}", _NORM_SOURCE)
        .replace("{blob}", blob)
        .replace("{script}", SCRIPT_NAME)
    )
    d = scratch_dir(root, {SCRIPT_NAME: snippet.source, SNIPPET_TEST: test})
    return str((d / SNIPPET_TEST).relative_to(root))
