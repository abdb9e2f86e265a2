"""A package face whose names are imported when first used (PEP 562).

A face that imports every module it names makes each importer pay for all of
them: ``from agentrt.llm import ChatModel`` loaded the openai SDK through the
face's OpenAI backend (``python -X importtime -c 'import openai'``: 0.52-0.70 s
on the shared 2-core machine), so every ``fixbugs`` command and worker paid for
it before doing anything. A lazy face keeps one ``__all__`` and loads
the module that defines a name on first access.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_face"]


def lazy_face(
    package: str, where: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose public names live in the
    modules ``where`` maps them to; ``namespace`` is the package's ``globals()``, where
    each name is kept once loaded."""

    def getattr_(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *where})

    return getattr_, dir_
