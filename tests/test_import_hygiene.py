"""agentrt stays light and acyclic.

* Importing the runtime's core (``agentrt``, ``agentrt.flow``,
  ``agentrt.graph`` and the other light modules) pulls no heavy optional
  dependency: those belong to the extras and to the modules that use them.
* The core distribution declares no heavy dependency.
* Without the ``cli`` extra, `agentrt` says in one line what to install.
* No import cycles among the project's modules (agentrt and fixbugs).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"agentrt": ROOT / "agentrt" / "src", "fixbugs": ROOT / "src"}

# optional dependencies: each belongs to an extra, never to the core
HEAVY = (
    "typer",
    "rich",
    "click",
    "starlette",
    "uvicorn",
    "fastapi",
    "llama_cpp",
    "redis",
    "matplotlib",
    "opentelemetry",
    "prometheus_client",
    "anthropic",
    "langgraph",
)
LIGHT_MODULES = (
    "agentrt",
    "agentrt.cli",
    "agentrt.flow",
    "agentrt.graph",
    "agentrt.llm",
    "agentrt.metrics",
    "agentrt.tokens",
    "agentrt.chunking",
    "agentrt.queues",
    "agentrt.context",
    "agentrt.evidence",
    "agentrt.pipeline",
)

# Cycles through fixbugs modules that are being broken elsewhere (issue 15);
# each entry is the sorted module list of one cycle. Empty it as they go.
KNOWN_FIXBUGS_CYCLES: list[list[str]] = []


def _heavy_after(modules: tuple[str, ...]) -> list[str]:
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(json.dumps(sorted({{h for h in {HEAVY!r} if h in sys.modules}})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found: list[str] = json.loads(done.stdout)
    return found


def test_light_modules_import_no_heavy_dependency():
    # the core's own dependencies may pull some when present (httpx imports
    # click and rich for its command line if they are installed): not ours
    baseline = set(_heavy_after(("httpx", "pydantic", "openai")))
    ours = set(_heavy_after(LIGHT_MODULES)) - baseline
    assert ours == set(), f"heavy modules imported by agentrt: {sorted(ours)}"


def test_the_core_distribution_declares_no_heavy_dependency():
    meta = tomllib.loads((ROOT / "agentrt" / "pyproject.toml").read_text())["project"]
    core = {
        d.split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
        for d in meta["dependencies"]
    }
    heavy_dists = {
        "llama-cpp-python",
        "fastapi",
        "matplotlib",
        "redis",
        "starlette",
        "typer",
        "rich",
        "uvicorn",
        "opentelemetry-sdk",
        "prometheus-client",
    }
    assert not core & heavy_dists
    assert core <= {"httpx", "pydantic", "openai", "anyio"}


def test_without_the_cli_extra_the_command_names_it():
    code = (
        "import sys\n"
        "sys.modules['typer'] = None  # as if the cli extra were not installed\n"
        "from agentrt.cli import main\n"
        "main(['--help'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "pip install 'agentrt[cli]'" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for pkg, src in PACKAGES.items():
        for path in (src / pkg).rglob("*.py"):
            parts = list(path.relative_to(src).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if "examples" in parts:
                continue  # sample repositories shipped as data, not project modules
            mods[".".join(parts)] = path
    return mods


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[tuple[str, int, tuple[str, ...]]]:
    """(module, level, names) of every import, function-local ones included,
    except those under ``if TYPE_CHECKING:`` (never run)."""
    out: list[tuple[str, int, tuple[str, ...]]] = []
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            skip.update(id(n) for b in node.body for n in ast.walk(b))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.extend((a.name, 0, ()) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.append((node.module or "", node.level, tuple(a.name for a in node.names)))
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> project modules it imports (a function-local import counts:
    it only defers the cycle). Importing ``a.b.c`` also runs ``a.b``'s
    ``__init__``, which counts, except for the importer's own packages."""
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        deps: set[str] = set()
        for name, level, names in _imports(ast.parse(path.read_text())):
            base = name
            if level:
                up = pkg.split(".")[: len(pkg.split(".")) - (level - 1)]
                base = ".".join(up + ([name] if name else []))
            targets = [f"{base}.{n}" for n in names if f"{base}.{n}" in mods] or [base]
            for t in targets:
                r = resolve(t)
                if r is None:
                    continue
                deps.add(r)
                parts = r.split(".")
                for k in range(2, len(parts)):
                    parent = ".".join(parts[:k])
                    if parent in mods and not mod.startswith(parent + "."):
                        deps.add(parent)
        deps.discard(mod)
        graph[mod] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_among_agentrt_modules():
    found = [c for c in cycles(import_graph()) if any(m.startswith("agentrt") for m in c)]
    assert found == []


def test_agentrt_never_imports_fixbugs():
    graph = import_graph()
    leaks = {
        m: sorted(d for d in deps if d.startswith("fixbugs"))
        for m, deps in graph.items()
        if m.startswith("agentrt")
    }
    assert {m: d for m, d in leaks.items() if d} == {}


def test_no_import_cycles_among_fixbugs_modules():
    found = [c for c in cycles(import_graph()) if c not in KNOWN_FIXBUGS_CYCLES]
    assert found == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from agentrt.flow.gate import X\n", {"agentrt.flow.gate", "agentrt.flow"}),
        ("def f():\n    import agentrt.sim\n", {"agentrt.sim"}),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import agentrt.sim\n", set()),
    ],
)
def test_the_graph_counts_local_imports_and_packages_but_not_type_checking(
    tmp_path, monkeypatch, source, expected
):
    src = tmp_path / "src" / "agentrt"
    for d in ("", "flow", "sim"):
        (src / d).mkdir(parents=True, exist_ok=True)
        (src / d / "__init__.py").write_text("")
    (src / "flow" / "gate.py").write_text("")
    (src / "probe.py").write_text(source)
    monkeypatch.setitem(PACKAGES, "agentrt", tmp_path / "src")
    monkeypatch.setitem(PACKAGES, "fixbugs", tmp_path / "none")
    assert import_graph()["agentrt.probe"] == expected
