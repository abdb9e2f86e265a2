"""JSON from a hostile source, parsed within stated bounds: depth, number length, finiteness.

``json.loads`` recurses once per nesting level (a report nested 200,000 deep
raised ``RecursionError``: a bare 500), turns a 100,000-digit number into an
``int`` (or a ``ValueError`` past Python's 4,300 digits) and reads ``1e999``,
``NaN`` and ``Infinity`` as non-finite floats that break every sum after.
:func:`loads` first measures the depth in one linear pass that skips strings
(a regex that takes an unterminated string to the end instead of
retrying, so no input makes it quadratic; 7 MB in about 0.2 s, twice
``json.loads``), then parses with hooks that
refuse an over-long number or a non-finite one. A refusal is
:class:`JsonLimit`, one line naming the input and the limit; invalid JSON
stays ``json.JSONDecodeError``, for the caller's own message.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any, NoReturn

from fixbugs.errors import InputError

__all__ = ["MAX_DEPTH", "MAX_NUMBER_CHARS", "JsonLimit", "json_depth", "loads"]

MAX_DEPTH = 64  # objects and arrays nested in one another
MAX_NUMBER_CHARS = 100  # one number literal, sign, point and exponent included

# a string, to its closing quote or, unterminated, to the end: every character after the
# opening quote is taken by one branch, so a match never fails and is never retried
_STRING = re.compile(r'"[^"\\]*+(?:\\.?[^"\\]*+)*+(?:"|\Z)', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JsonLimit(InputError):
    """JSON past one of this module's bounds."""


def json_depth(text: str) -> int:
    """The deepest nesting of ``text``'s arrays and objects, strings skipped: linear in
    ``text`` whatever it holds (regex substitutions and one running sum, all in C)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def loads(text: str, what: str) -> Any:
    """``text`` parsed, or :class:`JsonLimit` (``what`` names it: "bug report r.json")."""
    if json_depth(text) > MAX_DEPTH:
        raise JsonLimit(f"{what} nests JSON deeper than {MAX_DEPTH} levels")

    def refuse(literal: str) -> NoReturn:
        shown = literal if len(literal) <= 20 else f"a number of {len(literal)} characters"
        raise JsonLimit(
            f"{what} holds {shown}: a JSON number must be finite and at most "
            f"{MAX_NUMBER_CHARS} characters"
        )

    def parse_int(literal: str) -> int:
        if len(literal) > MAX_NUMBER_CHARS:
            refuse(literal)
        return int(literal)

    def parse_float(literal: str) -> float:
        value = float(literal) if len(literal) <= MAX_NUMBER_CHARS else math.inf
        if not math.isfinite(value):
            refuse(literal)
        return value

    return json.loads(text, parse_int=parse_int, parse_float=parse_float, parse_constant=refuse)
