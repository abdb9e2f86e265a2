"""``python -m fixbugs.index.worker``: parse the files given on stdin, one process of a build.

Input: one JSON array per line, ``[path, module or null, is_package, text]``.
Output: two lines per file, in order: its facts row and its words row
(:mod:`fixbugs.index.records`), which the parent validates like any cache
row. A worker imports only the index's parsing modules, so it starts in a
fraction of a second, and it runs nothing of the files it reads.
"""

from __future__ import annotations

import json
import sys

from fixbugs.index.parse import file_facts
from fixbugs.index.records import facts_to_json, words_to_json

__all__ = ["main"]


def main() -> None:
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        path, module, is_package, text = json.loads(line)
        facts = file_facts(path, module, bool(is_package), text)
        out.write(facts_to_json(facts) + "\n" + words_to_json(facts) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
