"""fixbugs' layout shows its parts, and the places that start a process are known.

* The root of ``src/fixbugs`` holds only ``__init__``, ``cli`` and
  ``errors``; every other module lives in one of the named subpackages
  (issue 22, item 2: folders that show the stages).
* Every place in ``src/fixbugs`` that starts a subprocess is listed in
  :data:`SUBPROCESS_STARTS`. A new one fails this test: a repository's code
  runs only through an executor (:mod:`fixbugs.sandbox.executor`), FixBugs'
  own tools only through :mod:`fixbugs.sandbox.hosttools`, so the list names
  modules of :mod:`fixbugs.sandbox` alone, and only shrinks (issue 22, item 3).
* Python source is parsed only through :func:`agentrt.parse_python` (and
  :func:`agentrt.literal_value`): one lock, since CPython before 3.11.8
  fails a parse when two threads convert parse trees at once (gh-106905).

The checks read the source with :mod:`ast` and import nothing, like
``tests/test_import_hygiene.py``; each is also run on a synthetic tree, so
a check that cannot fail would show.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXBUGS = ROOT / "src" / "fixbugs"

# refdocs reads the command line (and the service) to write docs/: the top floor, beside cli
ROOT_MODULES = frozenset({"__init__", "cli", "errors", "refdocs"})
SUBPACKAGES = frozenset(
    {
        "bench",
        "diffs",
        "eval",
        "examples",
        "index",
        "inputs",
        "localize",
        "pyenv",
        "queued",
        "repair",
        "run",
        "sandbox",
        "service",
        "stages",
    }
)

# Module (path under src/fixbugs) -> how many places in it start a process.
# This list must only shrink: lower a count when a start goes, never raise
# one or add a module. Only fixbugs.sandbox starts processes: a repository's
# code through an executor (fixbugs.sandbox.executor), FixBugs' own tools
# through fixbugs.sandbox.hosttools.
SUBPROCESS_STARTS: dict[str, int] = {
    # the contained command itself (async, and sync for patches)
    "sandbox/runner.py": 2,
    # FixBugs' own host tools (git, mount, interpreter probes, pip): one runner
    "sandbox/hosttools.py": 2,
    # the test workspace (plain subprocesses, for tests only): its command
    "sandbox/testing.py": 1,
}

# What starts a process, by module; ``exec*``/``spawn*`` of os by prefix.
_STARTERS = {
    "subprocess": frozenset(
        {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}
    ),
    "asyncio": frozenset({"create_subprocess_exec", "create_subprocess_shell"}),
    "os": frozenset({"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp"}),
}
_OS_PREFIXES = ("exec", "spawn")
# an event loop's own process starts, whatever the receiver is called
_LOOP_STARTERS = frozenset({"subprocess_exec", "subprocess_shell"})


def _starts(module: str, name: str) -> bool:
    if module == "os" and name.startswith(_OS_PREFIXES):
        return True
    return name in _STARTERS.get(module, frozenset())


def layout_problems(package: Path) -> list[str]:
    """What at the top of ``package`` is neither an allowed root module nor a named folder."""
    problems: list[str] = []
    for entry in sorted(package.iterdir()):
        if entry.is_dir():
            if entry.name == "__pycache__" or not any(entry.rglob("*.py")):
                continue  # not a package (bytecode, data)
            if entry.name not in SUBPACKAGES:
                problems.append(f"{entry.name}/: not one of the named subpackages")
            elif not (entry / "__init__.py").is_file():
                problems.append(f"{entry.name}/: has no __init__.py")
        elif entry.suffix == ".py" and entry.stem not in ROOT_MODULES:
            problems.append(f"{entry.name}: a root module outside the named subpackages")
    return problems


def subprocess_starts(source: str) -> int:
    """How many references in ``source`` name a function that starts a process.

    A reference counts whether it is called or handed on
    (``asyncio.to_thread(subprocess.run, ...)``); aliases (``import
    subprocess as sp``, ``from subprocess import Popen as P``) resolve.
    """
    tree = ast.parse(source)
    modules: dict[str, str] = {}  # local name -> module it is bound to
    functions: dict[str, tuple[str, str]] = {}  # local name -> (module, function)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                if a.asname is not None:
                    modules[a.asname] = a.name
                else:
                    modules[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                functions[a.asname or a.name] = (node.module, a.name)
    annotations: set[int] = set()  # a type (``subprocess.Popen[bytes]``) starts nothing
    for node in ast.walk(tree):
        if isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation is not None:
            annotations.update(id(n) for n in ast.walk(node.annotation))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns:
            annotations.update(id(n) for n in ast.walk(node.returns))
    count = 0
    for node in ast.walk(tree):
        if id(node) in annotations:
            continue
        if isinstance(node, ast.Attribute):
            if node.attr in _LOOP_STARTERS:
                count += 1
            elif isinstance(node.value, ast.Name) and node.value.id in modules:
                count += _starts(modules[node.value.id], node.attr)
            elif isinstance(node.value, ast.Attribute) and isinstance(node.value.value, ast.Name):
                # asyncio.subprocess.create_subprocess_exec and the like
                outer = modules.get(node.value.value.id)
                if outer is not None and node.attr in _STARTERS["asyncio"]:
                    count += outer == "asyncio"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            bound = functions.get(node.id)
            if bound is not None:
                module, name = bound
                count += _starts(module.split(".")[0], name)
    return count


def starts_by_module(package: Path) -> dict[str, int]:
    """Module path (under ``package``) -> its process starts, for modules that have any."""
    found: Counter[str] = Counter()
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        if rel.parts[0] == "examples":
            continue  # sample repositories shipped as data, never run by fixbugs itself
        n = subprocess_starts(path.read_text())
        if n:
            found[rel.as_posix()] = n
    return dict(found)


def test_the_package_root_holds_only_cli_errors_and_the_named_subpackages():
    assert layout_problems(FIXBUGS) == []


def test_no_new_place_starts_a_subprocess():
    found = starts_by_module(FIXBUGS)
    new = {m: n for m, n in found.items() if n > SUBPROCESS_STARTS.get(m, 0)}
    assert new == {}, (
        "new subprocess starts (module: count): run the repository's code through "
        "fixbugs.sandbox instead; the allow-list only shrinks"
    )
    fewer = {m: n for m, n in SUBPROCESS_STARTS.items() if found.get(m, 0) < n}
    assert fewer == {}, "fewer starts than listed: lower SUBPROCESS_STARTS to " + repr(
        {m: found.get(m, 0) for m in fewer}
    )


def test_only_the_sandbox_package_starts_processes():
    assert [m for m in SUBPROCESS_STARTS if not m.startswith("sandbox/")] == []


def test_the_layout_check_sees_a_root_module_and_an_unnamed_folder(tmp_path: Path):
    pkg = tmp_path / "fixbugs"
    for rel in (
        "__init__.py",
        "cli.py",
        "errors.py",
        "py.typed",
        "steps.py",
        "run/__init__.py",
        "run/agent.py",
        "staged/__init__.py",
        "stages/analysis.py",
        "service/dashboard/index.html",
        "__pycache__/steps.cpython-311.pyc",
    ):
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text("")
    assert layout_problems(pkg) == [
        "staged/: not one of the named subpackages",
        "stages/: has no __init__.py",
        "steps.py: a root module outside the named subpackages",
    ]


def test_the_subprocess_finder_sees_every_form():
    source = (
        "import asyncio, os, subprocess\n"
        "import subprocess as sp\n"
        "from subprocess import Popen, check_output as co\n"
        "from asyncio import create_subprocess_exec\n"
        "from os import execvp\n"
        "subprocess.run(['x'])\n"  # 1
        "sp.Popen(['x'])\n"  # 2
        "Popen(['x'])\n"  # 3
        "co(['x'])\n"  # 4
        "asyncio.create_subprocess_shell('x')\n"  # 5
        "create_subprocess_exec('x')\n"  # 6
        "asyncio.subprocess.create_subprocess_exec('x')\n"  # 7
        "os.system('x')\n"  # 8
        "os.spawnlp(os.P_WAIT, 'x')\n"  # 9
        "execvp('x', ['x'])\n"  # 10
        "asyncio.to_thread(subprocess.check_call, ['x'])\n"  # 11: handed on, not called
        "loop.subprocess_exec(factory, 'x')\n"  # 12
        "subprocess.PIPE, subprocess.TimeoutExpired, os.environ, os.path.join('a')\n"
        "def f(p: subprocess.Popen[bytes]) -> Popen[str]: ...\n"  # types start nothing
        "q: sp.Popen[bytes]\n"
    )
    assert subprocess_starts(source) == 12
    assert subprocess_starts("import shlex\nshlex.split('run x')\nrun = 1\nrun\n") == 0


# the one place that parses Python source (agentrt.parse_python): serialized, since
# CPython before 3.11.8 breaks on two threads converting a parse tree at once
PARSER = ROOT / "agentrt" / "src" / "agentrt" / "_pyast.py"
_DIRECT_PARSES = frozenset({"parse", "literal_eval"})


def direct_parses(source: str) -> int:
    """Calls of ``ast.parse`` or ``ast.literal_eval`` in ``source``, however imported."""
    tree = ast.parse(source)
    modules = {
        a.asname or a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import)
        for a in n.names
        if a.name == "ast"
    }
    names = {
        a.asname or a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "ast"
        for a in n.names
        if a.name in _DIRECT_PARSES
    }
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            count += f.value.id in modules and f.attr in _DIRECT_PARSES
        elif isinstance(f, ast.Name):
            count += f.id in names
    return count


def test_python_is_parsed_only_through_parse_python():
    found = {
        path.relative_to(ROOT).as_posix(): n
        for package in (FIXBUGS, ROOT / "agentrt" / "src" / "agentrt")
        for path in sorted(package.rglob("*.py"))
        if path != PARSER and "examples" not in path.relative_to(package).parts
        if (n := direct_parses(path.read_text()))
    }
    assert found == {}, "parse through agentrt.parse_python / literal_value (one lock)"


def test_the_parse_finder_sees_every_form():
    source = (
        "import ast\nimport ast as a\nfrom ast import parse, literal_eval as le\n"
        "ast.parse('x')\na.literal_eval('1')\nparse('x')\nle('1')\n"
        "ast.walk(ast.parse('y'))\nast.unparse(node)\n"
    )
    assert direct_parses(source) == 5


def test_the_record_grows_only_through_its_typed_methods() -> None:
    """``BugRun`` (and its parts) are updated by ``with_*`` methods in run/record.py, never
    by a string-keyed ``model_copy(update=...)`` that neither mypy nor pydantic checks."""
    composers = [
        FIXBUGS / "run" / "agent.py",
        FIXBUGS / "queued" / "pipeline.py",
        *sorted((FIXBUGS / "stages").glob("*.py")),
    ]
    assert len(composers) > 10
    keyed = [
        str(p.relative_to(FIXBUGS)) for p in composers if "model_copy(update=" in p.read_text()
    ]
    assert keyed == []
