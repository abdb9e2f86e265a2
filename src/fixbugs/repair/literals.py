"""String-literal and regex templates, guided by the failing assertion.

When a test says ``assert f(x) == expected`` and fails, the expected value
often holds a word the code never produces (``--force-with-lease`` where the
code writes ``--force``). These templates put such words into the region's
string literals, drop a word a literal has too many, trim stray whitespace,
loosen or tighten a regex's anchors, and let a ``+`` part or a group match nothing.
A fixed list of keys (``for k in ('_type', 'url'): del d[k]``) may lack the
one the failing assertion reads (``result['id']``). A
literal taken from the tests is recorded on the edit so ranking can mark the
patch as possibly overfitting.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fixbugs.repair.source import Edit, SourceFile

__all__ = ["key_edits", "literal_edits", "regex_edits"]

_RE_FUNCS = frozenset(
    {"sub", "subn", "match", "search", "findall", "finditer", "split", "compile", "fullmatch"}
)


# a character class or group quantified `+` (not an escaped `\\]+` or `\\)+`)
_ONE_OR_MORE = re.compile(r"(?<!\\)[\])]\+")


def _strings(src: SourceFile, nodes: list[ast.AST]) -> Iterator[ast.Constant]:
    """Non-empty string literals, docstrings excluded (they never fix behaviour)."""
    for node in nodes:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value
            and not isinstance(src.parents.get(node), ast.Expr)
        ):
            yield node


def _requote(
    src: SourceFile, node: ast.Constant, value: str, *, multiline: bool = False
) -> str | None:
    """``value`` written with the literal's own prefix and quotes (or repr).

    With ``multiline``, a raw triple-quoted literal may span lines (a verbose
    regex): a raw literal's source is its value, so writing it back keeps
    every line as it was.
    """
    raw = src.segment(node)
    m = re.match(r"^([rRuUbB]*)('''|\"\"\"|'|\")", raw)
    if not m:
        return None
    prefix, q = m.group(1), m.group(2)
    if "\n" in raw and not (multiline and len(q) == 3 and "r" in prefix.lower()):
        return None
    if "r" in prefix.lower():
        if q in value or value.endswith("\\"):
            return None
        return f"{prefix}{q}{value}{q}"
    body = value.replace("\\", "\\\\").replace(q, "\\" + q).replace("\n", "\\n")
    body = body.replace("\t", "\\t")
    return f"{prefix}{q}{body}{q}"


def literal_edits(src: SourceFile, nodes: list[ast.AST], wanted: tuple[str, ...]) -> Iterator[Edit]:
    """Put a wanted token into a literal, drop a word, or trim whitespace."""
    for node in _strings(src, nodes):
        value = str(node.value)
        words = value.split(" ")
        variants: list[tuple[str, str, tuple[str, ...], str]] = []
        for token in wanted[:12]:
            for w in dict.fromkeys(words):
                if len(w) >= 2 and w != token and (token.startswith(w) or w.startswith(token)):
                    variants.append(
                        (
                            value.replace(w, token),
                            f"`{w}` -> `{token}` (expected value)",
                            (token,),
                            "literal",
                        )
                    )
            if len(value) >= 2 and token.lower() == value.lower():
                continue
        if len(words) >= 2:
            for i, w in enumerate(words):
                if w:
                    kept = " ".join(words[:i] + words[i + 1 :])
                    variants.append((kept, f"drop `{w}` from the literal", (), "literal_drop"))
        if value != value.strip(" ") and value.strip(" "):
            variants.append((value.strip(" "), "trim the literal's spaces", (), "literal"))
        for new_value, why, lits, family in variants:
            rep = _requote(src, node, new_value)
            if rep is None:
                continue
            e = src.replace(node, rep, family, why, literals=lits)
            if e:
                yield e


def _is_regex_arg(src: SourceFile, node: ast.Constant) -> bool:
    """A pattern passed to ``re.*`` first, as it is or formatted (``r'^(%s)$' % NAME``)."""
    arg: ast.AST = node
    parent = src.parents.get(node)
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mod) and parent.left is node:
        arg = parent
    call = src.parents.get(arg)
    if not isinstance(call, ast.Call) or not call.args or call.args[0] is not arg:
        return False
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr in _RE_FUNCS and isinstance(f.value, ast.Name)


def _groups(p: str) -> Iterator[tuple[int, int]]:
    """(open, close) index of each group of pattern ``p``, lookarounds and references excepted."""
    stack: list[int] = []
    i, in_class = 0, False
    while i < len(p):
        ch = p[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if p[i + 1 : i + 2] == "]":
                i += 1  # `[]...]`: a leading `]` is part of the class
        elif ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            start = stack.pop()
            head = p[start + 1 : start + 4]
            if not head.startswith(("?=", "?!", "?<=", "?<!", "?P=", "?#")) and head[:2] != "?(":
                yield start, i
        i += 1


def _optional_groups(p: str, first_line: int) -> Iterator[tuple[str, str]]:
    """Each group that must match once made optional: ``(...)`` -> ``(...)?``.

    ``first_line`` is the literal's line: a group of a pattern over several
    lines is named by its own line.
    """
    for start, end in _groups(p):
        nxt = p[end + 1 : end + 2]
        body = p[start : end + 1]
        if (nxt and nxt in "*+?{") or re.fullmatch(r"\(\?[aiLmsux-]+\)", body):
            continue  # already quantified, or inline flags (no group)
        short = body if len(body) <= 30 else body[:27] + "..."
        line = first_line + p.count("\n", 0, start)
        yield (
            p[: end + 1] + "?" + p[end + 1 :],
            f"the group `{short}` (line {line}) may match nothing",
        )


def regex_edits(src: SourceFile, nodes: list[ast.AST]) -> Iterator[Edit]:
    """Loosen or tighten a pattern passed to ``re.*``: its anchors, a lazy `.*`, a part
    that must match once may match nothing (a `+` class or group, a group made optional).

    A verbose pattern (``(?x)``, often a raw triple-quoted literal over several
    lines) ignores its whitespace: its spaces are never made ``\\s+``.
    """
    for node in _strings(src, nodes):
        if not _is_regex_arg(src, node):
            continue
        p = str(node.value)
        verbose = bool(re.match(r"\s*\(\?[aiLmsux]*x", p))
        variants: list[tuple[str, str]] = []
        if p.startswith("^"):
            variants += [(p[1:], "drop the regex's `^` anchor"), ("\\b" + p[1:], "`^` -> `\\b`")]
        elif not re.match(r"\(\?[aiLmsux]+\)", p):  # global flags must stay first
            variants.append(("^" + p, "anchor the regex at the start"))
        if p.endswith("$") and not p.endswith("\\$"):
            variants.append((p[:-1], "drop the regex's `$` anchor"))
        else:
            variants.append((p + "$", "anchor the regex at the end"))
        if ".*" in p:
            variants.append((p.replace(".*", ".*?", 1), "make `.*` lazy"))
        if " " in p and not verbose:
            variants.append((p.replace(" ", "\\s+"), "spaces -> `\\s+`"))
        # a group or class that must match once may have to match nothing
        loose: list[tuple[str, str]] = []
        for m in _ONE_OR_MORE.finditer(p):
            i = m.end() - 1
            loose.append((p[:i] + "*" + p[i + 1 :], f"`{m.group()}` -> `{m.group()[:-1]}*`"))
        loose += list(_optional_groups(p, node.lineno))
        for family, group in (("regex", variants), ("regex_loosen", loose)):
            for new_p, why in group:
                rep = _requote(src, node, new_p, multiline=True)
                if rep is None:
                    continue
                e = src.replace(node, rep, family, why)
                if e:
                    yield e


def _key_list(node: ast.AST) -> list[str] | None:
    """The strings of a one-line tuple, list or set of two or more string constants."""
    if not isinstance(node, ast.Tuple | ast.List | ast.Set) or len(node.elts) < 2:
        return None
    if node.lineno != node.end_lineno:
        return None
    out = []
    for e in node.elts:
        if not (isinstance(e, ast.Constant) and isinstance(e.value, str)):
            return None
        out.append(e.value)
    return out


def key_edits(src: SourceFile, nodes: list[ast.AST], keys: tuple[str, ...]) -> Iterator[Edit]:
    """Add a key the failing assertion reads to a literal list of keys that lacks it.

    Only a list that is looped over or tested for membership (a set of keys
    the code treats alike); the key is a literal of the tests, so the
    candidate is marked as possibly overfitting by ranking.
    """
    for node in nodes:
        have = _key_list(node)
        if have is None:
            continue
        parent = src.parents.get(node)
        looped = isinstance(parent, ast.For | ast.comprehension) and parent.iter is node
        tested = isinstance(parent, ast.Compare) and any(
            isinstance(op, ast.In | ast.NotIn) for op in parent.ops
        )
        if not (looped or tested):
            continue
        seg = src.segment(node)
        q = "'" if src.segment(node.elts[0]).startswith("'") else '"'  # type: ignore[attr-defined]
        close = seg.rstrip()[-1]
        body = seg.rstrip()[:-1].rstrip().rstrip(",")
        for key in keys[:4]:
            if key in have or q in key:
                continue
            rep = f"{body}, {q}{key}{q}{close}"
            why = f"add `{key}` to the keys `{seg}` (the failing line reads it)"
            e = src.replace(node, rep, "key_add", why, literals=(key,))
            if e:
                yield e
