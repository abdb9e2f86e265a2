"""FixBugs' floors read top-down: no module imports a floor above its own (issue 46).

From the top: the command line; the service and the benchmarks (which run
the agent); the agent (the only code that knows the order of the stages and
composes the run record: the single-bug run, the staged pipeline, the
hand-off of a fix); the stages; the record the stages return and the context
they run in; the leaves (localization, repair, the index, inputs, the
user's environment); the sandbox; and what every floor may use (the diff
model, the errors). Modules of one floor may import each other, with one
more rule inside the stages' floor: a stage (a module that runs one step of
a bug's run) imports no other stage, only the stages' shared parts, and
those import no stage.

The check reads the source with :mod:`ast` (every import, module-level or
inside a function) and imports nothing; it also runs on a synthetic tree
with a wrong import, so a check that cannot fail would show.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXBUGS = ROOT / "src" / "fixbugs"

# (floor, the module paths under src/fixbugs it holds: a folder, or a module without .py);
# a module belongs to the floor of its longest matching path
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("command line", ("cli", "refdocs")),
    ("service and benchmarks", ("service", "eval", "bench")),
    ("agent", ("run", "queued")),
    ("stages", ("stages",)),
    (
        "record",
        (
            "run/context",
            "run/model_steps",
            "run/preflight",
            "run/progress",
            "run/record",
            "run/report",
            "run/report_schema",
        ),
    ),
    ("leaves", ("examples", "index", "inputs", "localize", "pyenv", "repair")),
    ("sandbox", ("sandbox",)),
    ("base", ("__init__", "diffs", "errors")),
)
# the stages themselves: each runs one step of a bug's run and imports no other
STAGES = frozenset(
    {
        "stages/analysis",
        "stages/file_relevance",
        "stages/fix",
        "stages/reproduce",
        "stages/rootcause",
        "stages/validate",
    }
)


def floor_of(module: str) -> int | None:
    """The floor (0 the top) of ``module`` (a path under src/fixbugs, no .py), or None."""
    best: tuple[int, int] | None = None  # (length of the match, floor)
    for i, (_, paths) in enumerate(FLOORS):
        for p in paths:
            if (module == p or module.startswith(p + "/")) and (best is None or len(p) > best[0]):
                best = (len(p), i)
    return None if best is None else best[1]


def _module_of(path: Path, package: Path) -> str:
    rel = path.relative_to(package).with_suffix("").as_posix()
    return rel.removesuffix("/__init__") if rel != "__init__" else rel


def imports_of(path: Path, package: Path) -> set[str]:
    """The modules of ``package`` that ``path`` imports, as paths under it (no .py)."""
    name = package.name
    here = _module_of(path, package).split("/")
    is_init = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here if is_init else here[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join([name, *base, *([node.module] if node.module else [])])
            else:
                mod = node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        for t in targets:
            parts = t.split(".")
            if parts[0] != name or len(parts) < 2:
                continue
            # the longest prefix that is a module or package of the tree
            for k in range(len(parts), 1, -1):
                rel = "/".join(parts[1:k])
                if (package / f"{rel}.py").is_file() or (package / rel / "__init__.py").is_file():
                    out.add(rel)
                    break
    return out


def floor_problems(package: Path, stages: frozenset[str] = STAGES) -> list[str]:
    """Every import in ``package`` that goes up a floor, or from a stage to another stage."""
    problems: list[str] = []
    for path in sorted(package.rglob("*.py")):
        mod = _module_of(path, package)
        if mod.startswith("examples/"):
            continue  # sample repositories shipped as data
        mine = floor_of(mod)
        if mine is None:
            problems.append(f"{mod}: on no floor")
            continue
        for target in sorted(imports_of(path, package)):
            theirs = floor_of(target)
            if theirs is not None and theirs < mine:
                problems.append(f"{mod} ({FLOORS[mine][0]}) imports {target} ({FLOORS[theirs][0]})")
            elif mod.startswith("stages/") and target in stages and target != mod:
                what = "a stage" if mod in stages else "a shared part of the stages"
                problems.append(f"{mod} ({what}) imports the stage {target}")
    return problems


def test_no_module_imports_a_floor_above_its_own() -> None:
    assert floor_problems(FIXBUGS) == []


def test_every_floor_names_modules_that_exist() -> None:
    for _, paths in FLOORS:
        for p in paths:
            assert (FIXBUGS / f"{p}.py").is_file() or (FIXBUGS / p).is_dir(), p
    for s in STAGES:
        assert (FIXBUGS / f"{s}.py").is_file(), s


def test_a_wrong_import_is_seen(tmp_path: Path) -> None:
    pkg = tmp_path / "fixbugs"
    for rel, text in {
        "__init__.py": "",
        "cli.py": "from fixbugs.run.agent import run_bug\n",
        "run/__init__.py": "",
        "run/agent.py": "from fixbugs.stages import fix\n",
        "run/record.py": "def f():\n    from fixbugs.run.agent import run_bug\n",
        "stages/__init__.py": "",
        "stages/fix.py": "from . import rootcause\nfrom .quorum import settle\n",
        "stages/rootcause.py": "from ..run.record import f\n",
        "stages/quorum.py": "from fixbugs.stages.fix import x\n",
        "sandbox/__init__.py": "from fixbugs.repair import y\n",
        "repair/__init__.py": "y = 1\n",
    }.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    stages = frozenset({"stages/fix", "stages/rootcause"})
    assert floor_problems(pkg, stages) == [
        "run/record (record) imports run/agent (agent)",
        "sandbox (sandbox) imports repair (leaves)",
        "stages/fix (a stage) imports the stage stages/rootcause",
        "stages/quorum (a shared part of the stages) imports the stage stages/fix",
    ]
