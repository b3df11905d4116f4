"""The compaction benchmark's baselines: plain sqlite3 and psycopg programs doing the job by hand.

What an application without event sourcing would write: one mutable-rows table of messages
(`session_id, message_id, position, role, body, active, superseded_by`, keyed by session and
message id, a partial index of the active rows by position). A compaction reads the active
rows in order (`orjson.loads` of each), calls the same `summarize`, then in ONE transaction
marks the superseded rows inactive with one set-based UPDATE (every active row up to the
last one the replacement does not keep) and INSERTs the summary in their place, commits, and
reads the active list back, as `compact()` returns it. SQLite runs in WAL mode at
`synchronous=FULL`, PostgreSQL at `synchronous_commit = on`: the durability the store's log
is written at.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from uuid import uuid4

import orjson

Summarize = Callable[[list[dict[str, Any]]], Sequence[dict[str, Any]]]

TABLE = (
    "CREATE TABLE messages (session_id TEXT NOT NULL, message_id TEXT NOT NULL, "
    "position INTEGER NOT NULL, role TEXT NOT NULL, body {json} NOT NULL, "
    "active {boolean} NOT NULL, superseded_by TEXT, PRIMARY KEY (session_id, message_id))"
)
INDEX = "CREATE INDEX messages_active ON messages (session_id, position) WHERE active"
ACTIVE = (
    "SELECT message_id, position, body FROM messages WHERE session_id = {p} AND active "
    "ORDER BY position"
)
SUPERSEDE = (
    "UPDATE messages SET active = {false}, superseded_by = {p} "
    "WHERE session_id = {p} AND active AND position <= {p}"
)
INSERT = "INSERT INTO messages VALUES ({p}, {p}, {p}, {p}, {p}, {true}, NULL)"
FILL = "INSERT INTO messages VALUES ({p}, {p}, {p}, {p}, {p}, {p}, NULL)"


def rows_of(session_id: str, messages: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The rows of `messages` (with ids) at positions 1, 2, …, all active."""
    return [
        (session_id, m["id"], n, m["role"], orjson.dumps(m).decode(), True)
        for n, m in enumerate(messages, 1)
    ]


def plan(
    rows: list[tuple[str, int, Any]], replacement: Sequence[dict[str, Any]]
) -> tuple[int, list[dict[str, Any]]]:
    """The position of the last row the replacement does not keep (every active row up to it
    is superseded), and the new messages (given ids), which take its place."""
    kept = {item["id"] for item in replacement if "id" in item}
    last = max((position for message_id, position, _ in rows if message_id not in kept), default=0)
    added = [{"id": f"msg_{uuid4().hex}", **item} for item in replacement if "id" not in item]
    return last, added


class PlainSQLite:
    """The mutable-rows table in its own SQLite file (WAL, `synchronous=FULL`)."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)  # explicit BEGIN / COMMIT
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute(TABLE.format(json="TEXT", boolean="INTEGER"))
        self.db.execute(INDEX)
        self.active = ACTIVE.format(p="?")
        self.supersede = SUPERSEDE.format(p="?", false="0")
        self.insert = INSERT.format(p="?", true="1")

    def fill(self, session_id: str, messages: Sequence[dict[str, Any]]) -> None:
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany(FILL.format(p="?"), rows_of(session_id, messages))

    def read(self, session_id: str) -> list[tuple[str, int, Any]]:
        return self.db.execute(self.active, (session_id,)).fetchall()

    def compact(self, session_id: str, summarize: Summarize) -> list[dict[str, Any]]:
        rows = self.read(session_id)
        return self.commit(session_id, rows, summarize([orjson.loads(r[2]) for r in rows]))

    def commit(
        self, session_id: str, rows: list[tuple[str, int, Any]], replacement: Sequence[dict]
    ) -> list[dict[str, Any]]:
        last, added = plan(rows, replacement)
        by = f"cmp_{uuid4().hex}"
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute(self.supersede, (by, session_id, last))
        self.db.executemany(
            self.insert,
            [(session_id, m["id"], last, m["role"], orjson.dumps(m).decode()) for m in added],
        )
        self.db.execute("COMMIT")
        return [orjson.loads(r[2]) for r in self.read(session_id)]

    def close(self) -> None:
        self.db.close()


class PlainPostgres:
    """The mutable-rows table in a PostgreSQL database (`synchronous_commit = on`)."""

    def __init__(self, url: str) -> None:
        import harness
        from psycopg.types.json import set_json_loads

        self.db = harness.connect(url)  # autocommit: explicit transactions below
        set_json_loads(orjson.loads, self.db)  # as the store reads JSON
        self.db.execute("SET synchronous_commit = on")
        self.db.execute(TABLE.format(json="JSON", boolean="BOOLEAN"))
        self.db.execute(INDEX)
        self.active = ACTIVE.format(p="%s")
        self.supersede = SUPERSEDE.format(p="%s", false="false")
        self.insert = INSERT.format(p="%s", true="true")

    def fill(self, session_id: str, messages: Sequence[dict[str, Any]]) -> None:
        with self.db.transaction(), self.db.cursor() as c:
            c.executemany(FILL.format(p="%s"), rows_of(session_id, messages))

    def read(self, session_id: str) -> list[tuple[str, int, Any]]:
        with self.db.cursor() as c:
            c.execute(self.active, (session_id,), prepare=True)
            return c.fetchall()

    def compact(self, session_id: str, summarize: Summarize) -> list[dict[str, Any]]:
        rows = self.read(session_id)
        return self.commit(session_id, rows, summarize([r[2] for r in rows]))

    def commit(
        self, session_id: str, rows: list[tuple[str, int, Any]], replacement: Sequence[dict]
    ) -> list[dict[str, Any]]:
        last, added = plan(rows, replacement)
        by = f"cmp_{uuid4().hex}"
        with self.db.transaction(), self.db.cursor() as c:
            c.execute(self.supersede, (by, session_id, last))
            c.executemany(
                self.insert,
                [(session_id, m["id"], last, m["role"], orjson.dumps(m).decode()) for m in added],
            )
        return [r[2] for r in self.read(session_id)]

    def close(self) -> None:
        self.db.close()
