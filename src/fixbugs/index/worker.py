"""``python -m fixbugs.index.worker [ingredients]``: one process of a build, on stdin's files.

Facts (no argument): one JSON array per line, ``[path, module or null,
is_package, text]``; two lines out per file, in order: its facts row and its
words row. Ingredients (``ingredients``): ``[path, text]`` in, one
ingredients row out per file. The rows are :mod:`fixbugs.index.records`'
and the parent validates them like any cache row. A worker imports only the
index's parsing modules, so it starts in a fraction of a second, and it runs
nothing of the files it reads.
"""

from __future__ import annotations

import json
import sys

from fixbugs.index.parse import file_facts, text_ingredients
from fixbugs.index.records import facts_to_json, ingredients_to_json, words_to_json

__all__ = ["main"]


def main() -> None:
    cut = sys.argv[1:] == ["ingredients"]
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        if cut:
            path, text = json.loads(line)
            out.write(ingredients_to_json(text_ingredients(path, text)) + "\n")
            continue
        path, module, is_package, text = json.loads(line)
        facts = file_facts(path, module, bool(is_package), text)
        out.write(facts_to_json(facts) + "\n" + words_to_json(facts) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
