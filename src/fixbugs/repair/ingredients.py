"""Ingredients: code elsewhere in the same repository that may hold the fix.

Redundancy-based repair (GenProg's "plastic surgery" hypothesis) finds that
a fix's code often already exists in the code base: the same call with other
arguments, or a sibling module doing the same job (another rule's
``match``). Three searches, all on ``ast``: calls to the same callee,
statements whose tokens are similar, and the returned expression of a
same-named function in a sibling module. An ingredient is used only when
every name it reads is in scope at the suspicious line (or importable the
way its own module imports it, in which case the import is added too).

The pieces are facts of each file version, cut and cached by the
repository's index (:mod:`fixbugs.index.ingredients`): the fix stage of a
large repository reads them instead of parsing every file again.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath

from agentrt import parse_python
from fixbugs.index.ingredients import FileIngredients, Ingredient, code_tokens, file_ingredients
from fixbugs.repair.source import Edit, SourceFile

__all__ = ["IngredientIndex", "ingredient_edits", "names_in_scope"]


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
    """Calls by callee, simple statements, function returns, and the attributes read on
    each name, across the repository (its files' :class:`FileIngredients`, which the
    repository's index keeps)."""

    def __init__(self, files: Iterable[FileIngredients]) -> None:
        self.calls: dict[str, list[Ingredient]] = {}
        self.statements: list[Ingredient] = []
        self.returns: dict[str, list[Ingredient]] = {}
        self.attributes: dict[str, set[str]] = {}  # name -> attributes read on it
        for f in files:
            for piece in f.pieces:
                if piece.kind == "call":
                    self.calls.setdefault(piece.key, []).append(piece)
                elif piece.kind == "returned":
                    self.returns.setdefault(piece.key, []).append(piece)
                else:
                    self.statements.append(piece)
            for name, attr in f.attributes:
                self.attributes.setdefault(name, set()).add(attr)

    @classmethod
    def of_sources(cls, sources: Iterable[SourceFile]) -> IngredientIndex:
        """The index of files parsed here (a repair of one file, in tests)."""
        return cls(file_ingredients(s.path, s.tree, s.text) for s in sources if s.tree)


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
    src: SourceFile, edit: Edit | None, snippet: Ingredient, scope: set[str]
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


def _usable(snippet: Ingredient, scope: set[str]) -> bool:
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
            mine = code_tokens(own)
            scored = []
            kind = type(node).__name__
            for sn in index.statements:
                if sn.kind != kind or sn.text == own:
                    continue
                j = len(mine & sn.tokens) / max(1, len(mine | sn.tokens))
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
            mine = code_tokens(src.segment(node.value))
            sibs.sort(
                key=lambda s: (
                    -len(mine & code_tokens(s.text)) / max(1, len(mine | code_tokens(s.text)))
                )
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
