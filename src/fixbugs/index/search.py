"""BM25 (``bm25s``) over a list of documents given as word counts.

The documents are the index's (one per source file, one per symbol), built
once from :class:`~fixbugs.index.parse.FileFacts` words and saved with the
index (``bm25s``' own format: arrays and JSON, no pickle), so a warm run
scores a query without tokenizing the repository again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fixbugs.index.parse import Words
from fixbugs.index.words import tokenize_code

if TYPE_CHECKING:
    import bm25s

__all__ = ["Bm25Table"]


class Bm25Table:
    """Scores of a query's words against ``size`` documents, in their order."""

    def __init__(self, model: bm25s.BM25 | None, size: int) -> None:
        self._model = model  # None: no document has a word
        self.size = size

    @classmethod
    def build(cls, docs: Sequence[Words]) -> Bm25Table:
        """Index ``docs``; an empty document counts as one placeholder word, as before."""
        import bm25s  # numpy-backed; imported when first used

        if not docs:
            return cls(None, 0)
        vocab: dict[str, int] = {}
        ids: list[list[int]] = []
        for doc in docs:
            row: list[int] = []
            for word, count in doc or (("_", 1),):
                row.extend([vocab.setdefault(word, len(vocab))] * count)
            ids.append(row)
        model = bm25s.BM25()
        model.index((ids, vocab), show_progress=False)
        return cls(model, len(docs))

    def save(self, folder: Path) -> None:
        """Write the table under ``folder`` (a new folder)."""
        folder.mkdir(parents=True, exist_ok=True)
        if self._model is not None:
            self._model.save(str(folder), allow_pickle=False)

    @classmethod
    def load(cls, folder: Path, size: int) -> Bm25Table:
        """The table :meth:`save` wrote; ``ValueError`` when it is not one of ``size`` docs."""
        import bm25s

        if size == 0:
            return cls(None, 0)
        try:
            model = bm25s.BM25.load(str(folder), allow_pickle=False)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"unreadable BM25 table: {e}") from e
        scores = getattr(model, "scores", None)
        if not isinstance(scores, dict) or scores.get("num_docs") != size:
            raise ValueError("BM25 table of another tree")
        if not _consistent(scores, model.vocab_dict):
            raise ValueError("BM25 table inconsistent with its vocabulary")
        return cls(model, size)

    def top(self, query: str, k: int) -> list[tuple[int, float]]:
        """The ``k`` best documents (index, score) with a positive score, best first
        (ties in document order)."""
        words = tokenize_code(query)
        if self._model is None or not words or k <= 0:
            return []
        scores = self._model.get_scores(words)
        best = float(max(scores)) if len(scores) else 0.0
        if best <= 0 or math.isnan(best):
            return []
        import numpy as np

        ranked = np.argsort(-scores, kind="stable")[:k]  # stable: ties keep document order
        return [(int(i), float(scores[i])) for i in ranked if scores[i] > 0]


def _consistent(scores: dict[str, object], vocab: object) -> bool:
    """A loaded table can be scored: ids within the matrix, entries within the documents."""
    import numpy as np

    data, indices, indptr = scores.get("data"), scores.get("indices"), scores.get("indptr")
    if not all(isinstance(a, np.ndarray) and a.ndim == 1 for a in (data, indices, indptr)):
        return False
    assert isinstance(data, np.ndarray) and isinstance(indices, np.ndarray)
    assert isinstance(indptr, np.ndarray)
    if not isinstance(vocab, dict) or not all(isinstance(v, int) for v in vocab.values()):
        return False
    n_terms = len(indptr) - 1  # the vocabulary holds one more: the empty word bm25s adds
    if not vocab or n_terms not in (len(vocab), len(vocab) - 1):
        return False
    ids = sorted(vocab.values())
    if ids != list(range(len(vocab))):
        return False
    size = scores.get("num_docs")
    return (
        isinstance(size, int)
        and len(data) == len(indices) == int(indptr[-1])
        and bool(np.all(np.diff(indptr) >= 0))
        and (len(indices) == 0 or (int(indices.min()) >= 0 and int(indices.max()) < size))
    )
