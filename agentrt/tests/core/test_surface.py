"""agentrt's public surface stays small: one curated ``__all__``, private modules.

As in httpx, implementation modules are ``_x.py`` behind their package's
``__init__``; users import ``agentrt`` or a subpackage that is a concept of
its own (``agentrt.llm``, ``agentrt.flow``, ``agentrt.queues``, ...). A new
public module has to be named here, so the surface cannot widen unnoticed.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import agentrt

SRC = Path(agentrt.__file__).resolve().parent
MAX_TOP_LEVEL = 60

# Public modules that are not a package's __init__, and why.
ALLOWED_PUBLIC = {
    # the console script's entry point: imports with no extra installed
    "agentrt.cli",
}
# Benchmarks are found by module name (`agentrt bench NAME`) and are not in the wheel.
ALLOWED_PREFIXES = ("agentrt.bench.",)


def public_modules(src: Path) -> list[str]:
    """Dotted names of the modules under ``src`` whose every part is public."""
    found: list[str] = []
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            continue  # a package: its __all__ is the public face
        if any(part.startswith("_") for part in parts):
            continue
        found.append(".".join(parts))
    return found


def test_top_level_all_is_curated_and_importable() -> None:
    names = agentrt.__all__
    assert len(names) <= MAX_TOP_LEVEL, f"{len(names)} names in agentrt.__all__"
    assert len(set(names)) == len(names)
    missing = [name for name in names if not hasattr(agentrt, name)]
    assert missing == []
    for name in ("Graph", "gather_map", "RetryingModel"):
        assert name in names


def test_every_public_module_is_a_package_or_allowed() -> None:
    stray = [
        name
        for name in public_modules(SRC)
        if name not in ALLOWED_PUBLIC and not name.startswith(ALLOWED_PREFIXES)
    ]
    assert stray == [], f"public implementation modules (make them _private): {stray}"


def test_the_allowed_public_modules_exist() -> None:
    # an allow-list entry for a module that went away would hide nothing, but lie
    for name in ALLOWED_PUBLIC:
        importlib.import_module(name)


def test_the_finder_sees_a_public_module(tmp_path: Path) -> None:
    # the check above can fail: a public module in a package is reported
    pkg = tmp_path / "agentrt" / "flow"
    pkg.mkdir(parents=True)
    for name in ("__init__.py", "_retry.py", "retry.py"):
        (pkg / name).write_text("")
    (tmp_path / "agentrt" / "__init__.py").write_text("")
    assert public_modules(tmp_path / "agentrt") == ["agentrt.flow.retry"]


def _fresh_python(code: str) -> str:
    """What ``code`` prints in a new interpreter (its imports, not this process's)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_public_name_has_its_module_and_loads_alone() -> None:
    """The surface is imported on first use; a name resolves without the rest of it."""
    assert set(agentrt._WHERE) == set(agentrt.__all__)
    probe = (
        "import sys; from agentrt import parse_python, FakeClock; "
        "print(sorted(m for m in ('openai', 'httpx', 'agentrt.flow', 'agentrt.llm') "
        "if m in sys.modules))"
    )
    assert _fresh_python(probe).strip() == "[]"
    try:
        agentrt.NoSuchName  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchName" in str(exc)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


def test_the_llm_face_loads_a_backend_only_when_it_is_used() -> None:
    """``from agentrt.llm import ChatModel`` must not cost every importer the openai SDK."""
    import agentrt.llm

    assert set(agentrt.llm._WHERE) == set(agentrt.llm.__all__)
    probe = (
        "import sys; from agentrt.llm import ChatModel, ChatRequest, FakeModel; "
        "print(sorted(m for m in ('openai', 'anthropic', 'llama_cpp') if m in sys.modules)); "
        "from agentrt.llm import OpenAIModel; print('openai' in sys.modules)"
    )
    assert _fresh_python(probe).split() == ["[]", "True"]
