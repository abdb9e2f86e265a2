"""The index cache: FixBugs' cache folder (``~/.cache/fixbugs/index``), keyed by content.

One SQLite database holds a row per file version (keyed by its path,
module name and content digest: :func:`file_key`) and a row per tree (its
content key and the file keys it lists); beside it, one folder per tree
holds its BM25 tables (``bm25s``' arrays, loaded without pickle). A tree
seen before is read back whole; a changed tree reuses the rows of its
unchanged files and parses only the rest.

The cache is under the user's home, yet read as untrusted: every row is
validated (:mod:`fixbugs.index.records`) and a BM25 table must match its
tree. A database that is not one (corrupt, foreign, locked for too long)
is set aside with a note and the index is built without it: a cache can
make a run faster, never wrong.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from fixbugs.index.records import FORMAT

__all__ = ["IndexCache", "TreeRow", "default_index_dir", "file_key", "tree_key"]

_KEEP_TREES = 24  # trees kept; older ones (and rows no kept tree lists) are pruned
_LISTING = TypeAdapter(list[tuple[str, str]])
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS files (key TEXT PRIMARY KEY, facts TEXT NOT NULL, "
    "words TEXT NOT NULL, ingredients TEXT)",  # ingredients: NULL until a repair asks
    "CREATE TABLE IF NOT EXISTS trees (key TEXT PRIMARY KEY, listing TEXT NOT NULL, "
    "used REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
)


def default_index_dir() -> Path:
    """``$FIXBUGS_INDEX_DIR``, else ``$XDG_CACHE_HOME/fixbugs/index`` (``~/.cache/fixbugs/
    index``), beside the test environments (``fixbugs bench scale`` points the first at a
    folder of its own, to measure a cold index without touching the user's)."""
    from fixbugs.pyenv.testenv import default_cache_dir

    named = os.environ.get("FIXBUGS_INDEX_DIR")
    return Path(named) if named else default_cache_dir().parent / "index"


def file_key(path: str, module: str | None, is_package: bool, text: str) -> str:
    """One file version: what its facts depend on (path, module, content, row format)."""
    h = hashlib.sha256(f"{FORMAT}\0{path}\0{module}\0{int(is_package)}\0".encode())
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def tree_key(keys: Iterable[tuple[str, str]]) -> str:
    """The tree's content key: its (path, file key) pairs, sorted."""
    h = hashlib.sha256(f"fixbugs-index-tree\0{FORMAT}\n".encode())
    for path, key in sorted(keys):
        h.update(f"{path}\0{key}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class TreeRow:
    """A cached tree: its files (path, file key) and the folder of its BM25 tables."""

    key: str
    listing: tuple[tuple[str, str], ...]
    tables: Path


class IndexCache:
    """The cache folder; every failure to read it is a note and a miss, never an error."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.notes: list[str] = []

    @classmethod
    def default(cls) -> IndexCache:
        return cls(default_index_dir())

    @property
    def _db_path(self) -> Path:
        return self.folder / "index.sqlite"

    def _open(self) -> sqlite3.Connection | None:
        """The database, ready; None (with a note) when it cannot be used."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self._db_path, timeout=10.0, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            self.notes.append(f"index cache {self.folder} unusable ({e}); indexed without it")
            return None
        try:
            db.execute("PRAGMA journal_mode=WAL")
            for stmt in _SCHEMA:
                db.execute(stmt)
            row = db.execute("SELECT value FROM meta WHERE name='format'").fetchone()
            if row is None:
                db.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (str(FORMAT),))
            elif row[0] != str(FORMAT):
                db.close()
                self._replace(row[0])
                return None
        except sqlite3.Error as e:
            db.close()
            self._set_aside(str(e))
            return None
        return db

    def _replace(self, found: object) -> None:
        """Remove a cache another FixBugs version wrote (its rows and tables mean something
        else, and its trees' keys are never asked again): the next open makes a new one."""
        self.notes.append(f"index cache of format {found!r} replaced by format {FORMAT}")
        for extra in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(str(self._db_path) + extra)
        shutil.rmtree(self.folder / "trees", ignore_errors=True)

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection | None]:
        db = self._open()
        try:
            yield db
        finally:
            if db is not None:
                db.close()

    def _set_aside(self, why: str) -> None:
        """Move a database that is not ours out of the way (kept, for a person to look at)."""
        self.notes.append(f"index cache {self._db_path} ignored ({why}); a new one is made")
        with contextlib.suppress(OSError):
            os.replace(self._db_path, self._db_path.with_suffix(".sqlite.bad"))
            for extra in ("-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.unlink(str(self._db_path) + extra)

    def tree(self, key: str) -> TreeRow | None:
        """The cached tree of that content key, or None."""
        with self._db() as db:
            if db is None:
                return None
            try:
                row = db.execute("SELECT listing FROM trees WHERE key=?", (key,)).fetchone()
                if row is None:
                    return None
                db.execute("UPDATE trees SET used=? WHERE key=?", (time.time(), key))
            except sqlite3.Error as e:
                self.notes.append(f"index cache: tree unreadable ({e})")
                return None
        listing = _listing(row[0])
        if listing is None:
            self.notes.append(f"index cache: tree {key[:12]} has an invalid listing; rebuilt")
            return None
        return TreeRow(key, listing, self._tables(key))

    def _select(self, keys: Sequence[str], columns: str, what: str) -> dict[str, tuple[str, ...]]:
        """``key -> columns`` of the cached file rows among ``keys`` (each a string)."""
        out: dict[str, tuple[str, ...]] = {}
        with self._db() as db:
            if db is None:
                return out
            try:
                for i in range(0, len(keys), 500):
                    part = list(keys[i : i + 500])
                    marks = ",".join("?" * len(part))
                    query = f"SELECT key, {columns} FROM files WHERE key IN ({marks})"
                    for key, *values in db.execute(query, part):
                        if all(isinstance(v, str) for v in values):
                            out[key] = tuple(values)
            except sqlite3.Error as e:
                self.notes.append(f"index cache: {what} unreadable ({e})")
        return out

    def rows(self, keys: Sequence[str], *, words: bool) -> dict[str, tuple[str, str]]:
        """``key -> (facts, words)`` JSON of the cached file rows among ``keys`` (``words``
        False: only the facts are read, the words column comes back empty)."""
        got = self._select(keys, "facts, " + ("words" if words else "''"), "file rows")
        return {k: (v[0], v[1]) for k, v in got.items()}

    def ingredient_rows(self, keys: Sequence[str]) -> dict[str, str]:
        """``key -> ingredients`` JSON of the cached file rows among ``keys``."""
        return {k: v[0] for k, v in self._select(keys, "ingredients", "ingredient rows").items()}

    def store_ingredients(self, rows: Sequence[tuple[str, str]]) -> None:
        """Save (key, ingredients) of file rows the cache holds (a row pruned meanwhile
        is not made again)."""
        self._write(
            "ingredients",
            lambda db: db.executemany(
                "UPDATE files SET ingredients=? WHERE key=?", [(r, k) for k, r in rows]
            ),
        )

    def _write(
        self,
        what: str,
        write: Callable[[sqlite3.Connection], object],
        then: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        """``write`` in one transaction, then ``then``; a failure is a note, not an error."""
        with self._db() as db:
            if db is None:
                return
            try:
                db.execute("BEGIN IMMEDIATE")
                write(db)
                db.execute("COMMIT")
                if then is not None:
                    then(db)
            except (sqlite3.Error, UnicodeError) as e:  # UnicodeError: text SQLite cannot hold
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                self.notes.append(f"index cache: {what} not saved ({e})")

    def _tables(self, key: str) -> Path:
        return self.folder / "trees" / key

    def store(
        self,
        key: str,
        listing: Sequence[tuple[str, str]],
        new_rows: Iterable[tuple[str, str, str]],
        write_tables: Callable[[Path], None],
    ) -> None:
        """Save the new file rows (key, facts, words), the tree, and its tables (written by
        ``write_tables(folder)`` into a fresh folder, moved into place whole)."""
        final = self._tables(key)
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            if not final.exists():
                tmp = Path(tempfile.mkdtemp(prefix=".new-", dir=final.parent))
                write_tables(tmp)
                try:
                    os.replace(tmp, final)
                except OSError:  # another run saved the same tree first
                    shutil.rmtree(tmp, ignore_errors=True)
        except OSError as e:
            self.notes.append(f"index cache: tables not saved ({e})")
            return

        def write(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT OR REPLACE INTO files (key, facts, words) VALUES (?, ?, ?)", new_rows
            )
            db.execute(
                "INSERT OR REPLACE INTO trees VALUES (?, ?, ?)",
                (key, json.dumps([list(e) for e in listing]), time.time()),
            )

        self._write("tree", write, then=self._prune)

    def _prune(self, db: sqlite3.Connection) -> None:
        old = [
            k
            for (k,) in db.execute(
                "SELECT key FROM trees ORDER BY used DESC LIMIT -1 OFFSET ?", (_KEEP_TREES,)
            )
        ]
        if not old:
            return
        db.execute("BEGIN IMMEDIATE")
        db.executemany("DELETE FROM trees WHERE key=?", [(k,) for k in old])
        kept: set[str] = set()
        for (listing,) in db.execute("SELECT listing FROM trees"):
            kept |= {k for _, k in (_listing(listing) or ())}
        stale = [k for (k,) in db.execute("SELECT key FROM files") if k not in kept]
        db.executemany("DELETE FROM files WHERE key=?", [(k,) for k in stale])
        db.execute("COMMIT")
        for k in old:
            shutil.rmtree(self._tables(k), ignore_errors=True)


def _listing(raw: object) -> tuple[tuple[str, str], ...] | None:
    """A tree's listing as stored, or None if it is not a list of (path, key) strings."""
    if not isinstance(raw, str):
        return None
    try:
        return tuple(_LISTING.validate_json(raw))
    except ValidationError:
        return None
