"""Find a user's pipeline from a ``module:attr`` or ``path/file.py:attr`` spec.

A worker on another machine runs the same pipeline definition by naming it;
the attribute is a :class:`Pipeline` or a zero-argument callable returning one.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from agentrt._errors import UserError
from agentrt.pipeline._stage import Pipeline

__all__ = ["load_pipeline"]


def load_pipeline(spec: str) -> Pipeline:
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise UserError(f"pipeline {spec!r}: expected MODULE:NAME or FILE.py:NAME")
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise UserError(f"pipeline {spec!r}: no file {target!r}")
        name = f"agentrt_user_pipeline_{path.stem}"
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise UserError(f"pipeline {spec!r}: cannot load {target!r}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        loader_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise UserError(f"pipeline {spec!r}: cannot import {target!r}: {exc}") from None
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise UserError(f"pipeline {spec!r}: {target!r} has no attribute {attr!r}") from None
    if not isinstance(obj, Pipeline) and callable(obj):
        obj = obj()
    if not isinstance(obj, Pipeline):
        raise UserError(f"pipeline {spec!r} is a {type(obj).__name__}, not a Pipeline")
    return obj
