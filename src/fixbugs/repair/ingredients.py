"""Ingredients: code elsewhere in the same repository that may hold the fix.

Redundancy-based repair (GenProg's "plastic surgery" hypothesis) finds that
a fix's code often already exists in the code base: the same call with other
arguments, or a sibling module doing the same job (another rule's
``match``). Three searches, all on ``ast``: calls to the same callee,
statements whose tokens are similar, and the returned expression of a
same-named function in a sibling module. An ingredient is used only when
every name it reads is in scope at the suspicious line (or importable the
way its own module imports it, in which case the import is added too).
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from agentrt import parse_python
from fixbugs.repair.source import Edit, SourceFile

__all__ = ["IngredientIndex", "ingredient_edits", "names_in_scope"]

_MAX_SEGMENT = 160


@dataclass(frozen=True, slots=True)
class _Snippet:
    path: str
    text: str
    names: frozenset[str]
    imports: tuple[tuple[str, str], ...]  # (name, import line) the snippet needs from its module


def _tokens(text: str) -> frozenset[str]:
    try:
        toks = tokenize.generate_tokens(io.StringIO(text).readline)
        return frozenset(
            t.string for t in toks if t.type in (tokenize.NAME, tokenize.OP, tokenize.STRING)
        )
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return frozenset(re.findall(r"\w+", text))


def _loads(node: ast.AST) -> frozenset[str]:
    return frozenset(
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    )


def _import_lines(src: SourceFile) -> dict[str, str]:
    out: dict[str, str] = {}
    if src.tree is None:
        return out
    for node in src.tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom) and node.lineno == node.end_lineno:
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                if isinstance(node, ast.ImportFrom):
                    line = f"from {'.' * node.level}{node.module or ''} import {alias.name}"
                    if alias.asname:
                        line += f" as {alias.asname}"
                else:
                    line = src.segment(node)
                out[name] = line
    return out


def module_names(src: SourceFile) -> set[str]:
    """Names bound at module level: imports, defs, classes, assignments."""
    out: set[str] = set()
    if src.tree is None:
        return out
    for node in src.tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


class IngredientIndex:
    """Calls by callee, simple statements, and function returns, across the repository."""

    def __init__(self, sources: list[SourceFile]) -> None:
        self.calls: dict[str, list[_Snippet]] = {}
        # (tokens, statement kind, snippet): the kind kept, so no snippet is parsed again
        self.statements: list[tuple[frozenset[str], str, _Snippet]] = []
        self.returns: dict[str, list[_Snippet]] = {}
        for src in sources:
            if src.tree is None:
                continue
            imports = _import_lines(src)

            def snip(
                node: ast.AST, text: str, src: SourceFile = src, imports: dict[str, str] = imports
            ) -> _Snippet:
                names = _loads(node)
                needed = tuple((n, imports[n]) for n in sorted(names) if n in imports)
                return _Snippet(src.path, text, names, needed)

            for node in ast.walk(src.tree):
                if isinstance(node, ast.Call) and node.lineno == node.end_lineno:
                    text = src.segment(node)
                    if len(text) <= _MAX_SEGMENT:
                        key = src.segment(node.func)
                        self.calls.setdefault(key, []).append(snip(node, text))
                elif isinstance(node, ast.Return | ast.Assign | ast.Expr) and (
                    node.lineno == node.end_lineno
                ):
                    text = src.segment(node)
                    if len(text) <= _MAX_SEGMENT and not isinstance(
                        getattr(node, "value", None), ast.Constant
                    ):
                        kind = type(node).__name__
                        self.statements.append((_tokens(text), kind, snip(node, text)))
                elif isinstance(node, ast.FunctionDef):
                    rets = [r for r in ast.walk(node) if isinstance(r, ast.Return) and r.value]
                    if len(rets) == 1 and rets[0].value is not None:
                        text = src.segment(rets[0].value)
                        if len(text) <= 3 * _MAX_SEGMENT:
                            self.returns.setdefault(node.name, []).append(snip(rets[0].value, text))


def names_in_scope(src: SourceFile, node: ast.AST) -> set[str]:
    """Names readable at ``node``: builtins, the module's own, the function's arguments, locals."""
    names = set(dir(builtins)) | module_names(src)
    fn = src.enclosing(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs):
            names.add(a.arg)
        if fn.args.vararg:
            names.add(fn.args.vararg.arg)
        if fn.args.kwarg:
            names.add(fn.args.kwarg.arg)
        for sub in ast.walk(fn):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.add(sub.id)
    return names


def _with_imports(
    src: SourceFile, edit: Edit | None, snippet: _Snippet, scope: set[str]
) -> Edit | None:
    """Add the imports the snippet needs (after the file's last top-level import)."""
    if edit is None:
        return None
    missing = [line for name, line in snippet.imports if name not in scope]
    if not missing:
        return edit
    if src.tree is None:
        return None
    last = 0
    for node in src.tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            last = node.end_lineno or node.lineno
    lines = edit.new_text.splitlines(keepends=True)
    new_text = "".join(lines[:last]) + "".join(m + "\n" for m in missing) + "".join(lines[last:])
    return Edit(edit.path, edit.start, edit.end, new_text, edit.template,
                edit.why + " (with its import)", edit.literals, edit.risk)  # fmt: skip


def _usable(snippet: _Snippet, scope: set[str]) -> bool:
    return all(n in scope or any(n == m for m, _ in snippet.imports) for n in snippet.names)


def ingredient_edits(
    src: SourceFile, nodes: list[ast.AST], index: IngredientIndex, *, limit: int = 24
) -> Iterator[Edit]:
    """Replace a region's call, statement or returned expression with a repository ingredient."""
    made = 0
    for node in nodes:
        if made >= limit:
            return
        scope = names_in_scope(src, node)
        own = src.segment(node)
        if isinstance(node, ast.Call):
            key = src.segment(node.func)
            shape = _shape(own)
            for sn in index.calls.get(key, [])[:40]:
                if sn.text == own or not _usable(sn, scope):
                    continue
                # the same call differing only in constants: a weak ingredient
                weak = _shape(sn.text) == shape or _is_decorator(src, node)
                family = "ingredient_const" if weak else "ingredient"
                why = f"same call as in {sn.path}: `{sn.text}`"
                e = _with_imports(src, src.replace(node, sn.text, family, why), sn, scope)
                if e:
                    made += 1
                    yield e
        if isinstance(node, ast.Return | ast.Assign | ast.Expr) and node.lineno == node.end_lineno:
            mine = _tokens(own)
            scored = []
            kind = type(node).__name__
            for toks, theirs, sn in index.statements:
                if theirs != kind or sn.text == own:
                    continue
                j = len(mine & toks) / max(1, len(mine | toks))
                if j >= 0.5:
                    scored.append((j, sn))
            scored.sort(key=lambda t: -t[0])
            for _j, sn in scored[:6]:
                if not _usable(sn, scope):
                    continue
                why = f"similar statement in {sn.path}: `{sn.text}`"
                e = _with_imports(src, src.replace(node, sn.text, "ingredient", why), sn, scope)
                if e:
                    made += 1
                    yield e
        if isinstance(node, ast.Return) and node.value is not None:
            fn = src.enclosing(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            if not isinstance(fn, ast.FunctionDef):
                continue
            here = PurePosixPath(src.path).parent
            sibs = [
                s for s in index.returns.get(fn.name, []) if PurePosixPath(s.path).parent == here
            ]
            mine = _tokens(src.segment(node.value))
            sibs.sort(
                key=lambda s: -len(mine & _tokens(s.text)) / max(1, len(mine | _tokens(s.text)))
            )
            for sn in sibs[:8]:
                if sn.path == src.path or not _usable(sn, scope):
                    continue
                why = f"`{fn.name}` of sibling {sn.path}"
                rep = src.replace(node.value, sn.text, "ingredient", why)
                e = _with_imports(src, rep, sn, scope)
                if e:
                    made += 1
                    yield e


def _shape(text: str) -> str:
    """The expression's structure with every constant masked."""
    try:
        tree = parse_python(text, mode="eval")
    except SyntaxError:
        return text
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant):
            n.value = None
    return ast.dump(tree)


def _is_decorator(src: SourceFile, node: ast.AST) -> bool:
    parent = src.parents.get(node)
    return isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and any(
        d is node for d in parent.decorator_list
    )
