"""What a fake or simulated model says: pluggable, deterministic, of the requested size.

A responder turns a request into answer text. The default one answers with
deterministic filler of exactly ``max_tokens`` tokens (by the project's token
estimate: one three-letter word plus a space is one token), or, when a JSON
schema is requested, a small JSON value that satisfies the schema. Load
experiments care about sizes and timings, not wording; tests that care about
wording plug in their own responder.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DefaultResponder",
    "Responder",
    "ResponderInput",
    "cut_short",
    "filler_text",
    "value_for_schema",
]

_WORDS = [
    "the",
    "and",
    "for",
    "are",
    "but",
    "not",
    "you",
    "all",
    "any",
    "can",
    "had",
    "her",
    "was",
    "one",
    "our",
    "out",
    "day",
    "get",
    "has",
    "him",
    "his",
    "how",
    "man",
    "new",
    "now",
    "old",
    "see",
    "two",
    "way",
    "who",
    "boy",
    "did",
    "its",
    "let",
    "put",
    "say",
    "she",
    "too",
    "use",
    "map",
    "log",
    "bug",
    "fix",
    "run",
    "set",
    "key",
    "row",
    "col",
    "sum",
    "max",
    "min",
    "end",
    "top",
    "cap",
    "api",
    "sql",
    "ram",
    "cpu",
    "net",
    "job",
]


@dataclass(frozen=True, slots=True)
class ResponderInput:
    messages: tuple[tuple[str, str], ...]  # (role, content)
    max_tokens: int
    json_schema: dict[str, Any] | None = None
    seed: int = 0

    def digest(self) -> int:
        h = hashlib.blake2b(digest_size=8)
        h.update(str(self.seed).encode())
        for role, content in self.messages:
            h.update(role.encode())
            h.update(b"\0")
            h.update(content.encode())
        return int.from_bytes(h.digest(), "big")


Responder = Callable[[ResponderInput], str]


def filler_text(tokens: int, rng: random.Random) -> str:
    """Text of exactly ``tokens`` estimated tokens: n words of 3 bytes, n-1 spaces."""
    return " ".join(rng.choice(_WORDS) for _ in range(max(0, tokens)))


def cut_short(text: str) -> str:
    """A malformed answer: the first half of ``text`` and an ellipsis (JSON that does not parse)."""
    return text[: max(1, len(text) // 2)] + " ..."


def value_for_schema(schema: dict[str, Any], rng: random.Random, depth: int = 0) -> Any:
    """A small value that satisfies ``schema`` (the common JSON-schema subset)."""
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return value_for_schema(schema[key][0], rng, depth + 1)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        return {k: value_for_schema(v, rng, depth + 1) for k, v in props.items()}
    if kind == "array":
        n = max(1, int(schema.get("minItems", 1)))
        item = schema.get("items", {"type": "string"})
        return [value_for_schema(item, rng, depth + 1) for _ in range(n if depth < 4 else 0)]
    if kind == "string":
        return " ".join(rng.choice(_WORDS) for _ in range(3))
    if kind == "integer":
        return int(schema.get("minimum", rng.randint(0, 9)))
    if kind == "number":
        return float(schema.get("minimum", round(rng.random(), 3)))
    if kind == "boolean":
        return True
    return None


class DefaultResponder:
    """Filler of the requested length, or JSON matching the requested schema."""

    def __call__(self, req: ResponderInput) -> str:
        rng = random.Random(req.digest())
        if req.json_schema is not None:
            return json.dumps(value_for_schema(req.json_schema, rng))
        return filler_text(req.max_tokens, rng)
