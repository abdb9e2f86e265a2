"""Which functions of a file the report's own identifiers point at, and which lines of a long one.

Issues name code as they describe it: ``__all__``, ``set_index``,
``linkcheck_anchors``, ``Permutation``. An identifier the report writes that
few of a file's functions use says where to look better than a count of
shared words: ``tokenize_code`` splits ``__all__`` to the word "all", which
every file says. So identifiers are matched whole and case kept, weighted by
their rarity among the file's functions (inverse document frequency), and
code-like ones (:func:`fixbugs.localize.report_text.code_words`: written in
the report's code, or shaped like code) count more than plain words. The words identifiers are
made of (``tokenize_code``: ``expand_path`` says "expand" and "path") count
a little too, so a report that says "$PATH" still finds ``expand_path``
when no identifier matches whole. Docstrings are left out: they describe
the function in prose, and a fix changes code. A function whose own name the
report writes gets a bonus, unless the report's own code defines that name
(its ``def setup(app):``), and a public wrapper hands the bonus to its
private namesake (``_hermite_normal_form``), where the work is done.

Pure: texts and spans in, scores and line ranges out.
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from agentrt import parse_python
from fixbugs.index.words import tokenize_code
from fixbugs.localize.report_text import code_words

__all__ = [
    "ReportIdentifiers",
    "best_lines",
    "docstring_lines",
    "function_matches",
    "richest_window",
]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE_WEIGHT = 2.0
_WORD_WEIGHT = 0.5
_NAME_BONUS = 6.0  # the report writes the function's own name
_COMMENT = re.compile(r"#.*$")  # near enough: a '#' inside a string cuts the line short
_PIECE_WEIGHT = 0.25  # a word an identifier is made of, matched against the report's
_MIN_LEN = 3  # shorter identifiers (x, df, i) match by chance
_DEFINED = re.compile(r"\b(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True, slots=True)
class ReportIdentifiers:
    """The identifiers a report writes, and which of them read as code."""

    words: frozenset[str]
    code: frozenset[str]
    pieces: frozenset[str]  # the words of every identifier (tokenize_code)
    defined: frozenset[str] = frozenset()  # names the report's own code defines (def, class)

    @classmethod
    def of(cls, report: str) -> ReportIdentifiers:
        words = frozenset(w for w in _IDENT.findall(report) if len(w) >= _MIN_LEN)
        # and dunders: ``__all__`` is code in any sentence
        code = words & code_words(report) | {w for w in words if w.startswith("__")}
        defined = frozenset(_DEFINED.findall(report))
        return cls(words, code, frozenset(tokenize_code(report)), defined)

    def weight(self, word: str) -> float:
        return _CODE_WEIGHT if word in self.code else _WORD_WEIGHT


def docstring_lines(text: str) -> frozenset[int]:
    """Lines of the module's, classes' and functions' docstrings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = parse_python(text)
        except (SyntaxError, ValueError):
            return frozenset()
    out: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        first = node.body[0] if node.body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            out.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return frozenset(out)


def function_matches(
    lines: Sequence[str],
    spans: Sequence[tuple[str, int, int]],
    ids: ReportIdentifiers,
    docs: frozenset[int] = frozenset(),
) -> list[tuple[int, float]]:
    """(index into ``spans``, score) of every function the report's identifiers match,
    best first. A long function matches more by chance, so its score is damped by its
    length in code lines."""
    bags: list[set[str]] = []
    piece_bags: list[set[str]] = []
    sizes: list[int] = []
    for _, a, b in spans:
        code = "\n".join(lines[n - 1] for n in range(a, min(b, len(lines)) + 1) if n not in docs)
        bags.append(set(_IDENT.findall(code)) & ids.words)
        piece_bags.append(set(tokenize_code(code)) & ids.pieces)
        sizes.append(code.count("\n") + 1)
    df = Counter(w for bag in bags for w in bag)
    piece_df = Counter(w for bag in piece_bags for w in bag)
    n = max(1, len(spans))
    names = {name.rsplit(".", 1)[-1] for name, _, _ in spans}
    out: list[tuple[int, float]] = []
    for i, (name, _, _) in enumerate(spans):
        score = sum(math.log(1 + n / df[w]) * ids.weight(w) for w in bags[i])
        score += _PIECE_WEIGHT * sum(math.log(1 + n / piece_df[w]) for w in piece_bags[i])
        score += _name_bonus(name.rsplit(".", 1)[-1], ids, names)
        score /= 1 + 0.5 * math.log(1 + sizes[i] / 30)
        if score > 0:
            out.append((i, score))
    out.sort(key=lambda p: (-p[1], p[0]))
    return out


def _name_bonus(simple: str, ids: ReportIdentifiers, names: Collection[str]) -> float:
    """The report writes the function's own name (not as a name its own code defines:
    a report's ``def setup(app):`` is the user's ``setup``). A public function that
    has a private namesake in the file (``hermite_normal_form`` and
    ``_hermite_normal_form``) is a wrapper: the namesake, where the work is, gets
    the bonus instead."""
    if len(simple) <= _MIN_LEN:
        return 0.0
    if simple in ids.words and simple not in ids.defined:
        return 0.0 if "_" + simple in names else _NAME_BONUS
    public = simple.lstrip("_")
    if public != simple and public in ids.code and public not in ids.defined:
        return _NAME_BONUS
    return 0.0


def _line_score(line: str, ids: ReportIdentifiers) -> float:
    line = _COMMENT.sub("", line)  # a comment is prose, as a docstring is
    whole = sum(ids.weight(w) for w in set(_IDENT.findall(line)) & ids.words)
    return whole + _PIECE_WEIGHT * len(set(tokenize_code(line)) & ids.pieces)


def richest_window(
    lines: Sequence[str],
    lo: int,
    hi: int,
    ids: ReportIdentifiers,
    *,
    width: int,
    docs: frozenset[int] = frozenset(),
    head: int | None = None,
) -> tuple[int, int] | None:
    """The ``width`` lines of ``lo..hi`` richest in the report's identifiers (code-like
    ones count more; docstring lines and line ``head``, the function's def, count
    nothing); None when no line holds one."""
    if hi - lo + 1 <= width:
        return lo, hi
    # the first line (the def, or a decorator) names the function, which chose it: it
    # says nothing about which of its lines
    head = lo if head is None else head
    score = [
        0.0 if n in docs or n == head else _line_score(lines[n - 1], ids) for n in range(lo, hi + 1)
    ]
    if not any(score):
        return None
    best, best_at, run = -1.0, lo, sum(score[:width])
    for i in range(0, len(score) - width + 1):
        if i:
            run += score[i + width - 1] - score[i - 1]
        if run > best:
            best, best_at = run, lo + i
    return best_at, best_at + width - 1


def best_lines(
    lines: Sequence[str],
    lo: int,
    hi: int,
    ids: ReportIdentifiers,
    *,
    width: int,
    docs: frozenset[int] = frozenset(),
) -> tuple[int, int]:
    """:func:`richest_window` of a function's ``lo..hi``; with no identifier on any
    line, the first ``width`` lines of code, past the docstring."""
    found = richest_window(lines, lo, hi, ids, width=width, docs=docs)
    if found is not None:
        return found
    first = next((n for n in range(lo + 1, hi + 1) if n not in docs), lo)
    start = min(first, hi - width + 1)
    return start, start + width - 1
