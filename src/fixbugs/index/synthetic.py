"""Synthetic repositories of a given size, for ``fixbugs bench scale``.

Deterministic: the same size always writes the same tree and report. A
tree is packages of modules (one in ten a test module), each with
imports of its neighbours (absolute and relative), a class deriving from
another module's class, methods, functions, docstrings and error-message
literals, so every index signal has real work. One module in the middle
holds the bug: the report names its method in prose and quotes its error
message, as a user would, without a traceback.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SyntheticRepo", "write_synthetic_repo"]

_NOUN_TEXT = (
    "account widget ledger quota frame parser cache token route batch order stock "
    "packet shard queue index tensor matrix vector codec stream buffer report query "
    "profile session invoice refund client server handler policy bucket record schema"
)
_WORDS = tuple(_NOUN_TEXT.split())
_VERBS = tuple(
    [
        "load",
        "save",
        "merge",
        "split",
        "apply",
        "render",
        "check",
        "build",
        "update",
        "parse",
        "scale",
        "sync",
    ]
)
_MODULES_PER_PACKAGE = 20


@dataclass(frozen=True, slots=True)
class SyntheticRepo:
    """A written tree: its root, its report, how many files, and where the bug is."""

    root: Path
    report: Path
    files: int
    bug_path: str
    bug_symbol: str


def _module_name(i: int) -> tuple[str, str]:
    """(package, module) of source module ``i``."""
    return f"pkg{i // _MODULES_PER_PACKAGE:04d}", f"mod{i % _MODULES_PER_PACKAGE:02d}"


def _class_name(rng: random.Random, i: int) -> str:
    return f"{rng.choice(_WORDS).title()}{rng.choice(_WORDS).title()}{i}"


def _source(i: int, n: int, rng: random.Random, *, bug: bool) -> str:
    pkg, mod = _module_name(i)
    words = [rng.choice(_WORDS) for _ in range(6)]
    lines = [f'"""The {words[0]} {words[1]} of {pkg}.{mod}: {" ".join(words[2:])}."""', ""]
    lines.append("import os")
    if i > 0:
        bpkg, bmod = _module_name(rng.randrange(i))
        lines.append(f"from {bpkg}.{bmod} import Base{bpkg}{bmod}")
        base = f"Base{bpkg}{bmod}"
    else:
        base = "object"
    if i % _MODULES_PER_PACKAGE:
        _, sibling = _module_name(i - 1)
        lines.append(f"from . import {sibling}")
    lines += ["", "", f"class Base{pkg}{mod}({base}):", f'    """Base of {words[3]}s."""', ""]
    lines += ["    def describe(self):", f"        return {words[4]!r}", "", ""]
    cls = _class_name(rng, i)
    lines += [f"class {cls}(Base{pkg}{mod}):", f'    """A {words[0]} that keeps {words[5]}s."""']
    lines += ["", "    limit = 10", ""]
    for k in range(4):
        verb, noun = rng.choice(_VERBS), rng.choice(_WORDS)
        name = "rebalance_quota_total" if bug and k == 2 else f"{verb}_{noun}_{k}"
        lines += [
            f"    def {name}(self, {noun}, count=0):",
            f'        """{verb.title()} the {noun}."""',
            "        if count > self.limit:",
            f'            raise ValueError("cannot {verb} {noun} over the limit of {cls}")',
            f"        total = count * {k + 1} + len(str({noun}))",
            f"        return os.path.join(str(total), {noun!r})",
            "",
        ]
    for k in range(3):
        verb, noun = rng.choice(_VERBS), rng.choice(_WORDS)
        lines += [
            "",
            f"def {verb}_{noun}s_{i}_{k}(items):",
            f'    """{verb.title()} every {noun} of ``items``."""',
            "    out = []",
            "    for item in items:",
            f"        out.append({cls}().describe() + str(item))",
            f'    return "{noun} " + ", ".join(out)',
        ]
    if bug:
        lines += [
            "",
            "",
            "def rebalance_quota_shares(shares, total):",
            '    """Spread ``total`` over the shares, by weight."""',
            "    weight = sum(shares)",
            "    if weight == 0:",
            '        raise ZeroDivisionError("quota shares weigh nothing at all")',
            "    return [total * s // weight for s in shares]",
        ]
    return "\n".join(lines) + "\n"


def _test_source(i: int) -> str:
    pkg, mod = _module_name(i)
    return (
        f"from {pkg}.{mod} import Base{pkg}{mod}\n\n\n"
        f"def test_describe_{i}():\n    assert Base{pkg}{mod}().describe()\n"
    )


def write_synthetic_repo(dest: Path, files: int) -> SyntheticRepo:
    """Write a tree of ``files`` files (at least 10) under ``dest`` (a new folder)."""
    files = max(10, files)
    rng = random.Random(files)  # deterministic per size
    n_tests = files // 10
    n_sources = files - n_tests - 1  # one file is the README
    packages = {_module_name(i)[0] for i in range(n_sources)}
    n_sources -= len(packages)  # each package's __init__.py is a file too
    bug = n_sources // 2
    root = dest / "repo"
    root.mkdir(parents=True)
    (root / "README.md").write_text("A synthetic project for FixBugs' scale bench.\n")
    for pkg in sorted(packages):
        (root / pkg).mkdir()
        (root / pkg / "__init__.py").write_text(f'"""Package {pkg}."""\n')
    for i in range(n_sources):
        pkg, mod = _module_name(i)
        (root / pkg / f"{mod}.py").write_text(_source(i, n_sources, rng, bug=i == bug))
    (root / "tests").mkdir()
    for t in range(n_tests):
        i = (t * 7) % max(1, n_sources)
        (root / "tests" / f"test_{t:05d}.py").write_text(_test_source(i))
    bpkg, bmod = _module_name(bug)
    report = dest / "report.md"
    report.write_text(
        "# Rebalancing quota shares crashes when every share is zero\n\n"
        "When I rebalance the quota shares of an account whose shares are all zero, the "
        "program stops with `ZeroDivisionError: quota shares weigh nothing at all` instead of "
        "giving every share nothing. The rebalance quota total looks wrong too.\n"
    )
    written = sum(1 for p in root.rglob("*") if p.is_file())
    return SyntheticRepo(root, report, written, f"{bpkg}/{bmod}.py", "rebalance_quota_shares")
