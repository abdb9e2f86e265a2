"""The SQLite backend's tables, and what opening an older file adds to it.

Kept apart from :mod:`agentrt.queues._sqlite` (the operations): a queue file
outlives the code that wrote it, so every change here must leave a file
from an earlier version openable, with its messages still served.
"""

from __future__ import annotations

import sqlite3

__all__ = ["create_schema"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    item TEXT NOT NULL, stage TEXT NOT NULL, job TEXT NOT NULL,
    payload TEXT NOT NULL, key TEXT, cost_s REAL NOT NULL,
    enqueued_at REAL NOT NULL, deliveries INTEGER NOT NULL DEFAULT 0,
    consumer TEXT, lease_until REAL,  -- NULL: queued; else leased until then
    grp TEXT NOT NULL DEFAULT ''  -- the job's fairness group
);
CREATE INDEX IF NOT EXISTS messages_stage ON messages (stage, job, seq);
CREATE INDEX IF NOT EXISTS messages_item ON messages (item, stage);
CREATE TABLE IF NOT EXISTS effects (
    item TEXT NOT NULL, stage TEXT NOT NULL, result TEXT NOT NULL, applied_at REAL NOT NULL,
    PRIMARY KEY (item, stage)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS records (
    item TEXT NOT NULL, stage TEXT NOT NULL, job TEXT NOT NULL, state TEXT NOT NULL,
    attempts INTEGER NOT NULL, queued_at REAL, started_at REAL, finished_at REAL, error TEXT,
    PRIMARY KEY (item, stage)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dead (
    item TEXT NOT NULL, stage TEXT NOT NULL, job TEXT NOT NULL, payload TEXT NOT NULL,
    error TEXT, at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS dead_stage ON dead (stage);  -- stats() counts them per stage
CREATE TABLE IF NOT EXISTS served (  -- a stage's latest claim ticket of each group
    stage TEXT NOT NULL, grp TEXT NOT NULL, ticket INTEGER NOT NULL,
    PRIMARY KEY (stage, grp)
) WITHOUT ROWID;
"""

# messages.grp came with fairness groups: a file from before has no such column
_GROUP_COLUMN = "ALTER TABLE messages ADD COLUMN grp TEXT NOT NULL DEFAULT ''"


def create_schema(conn: sqlite3.Connection) -> None:
    """Create what is missing, then add ``messages.grp`` to a file from before groups.

    The check and the ``ALTER`` are one ``BEGIN IMMEDIATE`` transaction, so
    two processes opening the same old file add the column once. The old
    file's messages land in group ``""``.
    """
    conn.executescript(_SCHEMA)
    conn.execute("BEGIN IMMEDIATE")
    try:
        cols = {row[1] for row in conn.execute("PRAGMA table_info(messages)")}
        if "grp" not in cols:
            conn.execute(_GROUP_COLUMN)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
