"""The read-model benchmark's baselines: what plain sqlite3 code does in the store's place.

Used by read_models.py: (b) `MutableRows`, the conventional table of mutable rows that
`active()` is compared with; (c) `PlainCopy`, a plain sqlite3 program that writes the rows
the views hold into copies of the views' tables (made by `copy_schema` from their DDL as it
is in the file), and the INSERT...SELECT floor.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import orjson

VIEWS = ("sessions", "active_messages", "message_history", "compaction_attempts")
COPY_PREFIX = "bench_copy_"
TOPIC = "transcripts:Transcript."
REBUILD_BATCH = 1000  # events per transaction, as the store's catch-up takes them


# -- (b) the mutable-rows baseline ----------------------------------------------------------


class MutableRows:
    """The conventional table: one mutable row per active message, in its own file."""

    def __init__(self, path: Path, rows: list[tuple[str, int, str]]) -> None:
        """A new table `t` in a new WAL file at `path`, holding `rows`."""
        self.connection = sqlite3.connect(path)
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute(
            "CREATE TABLE t (session_id TEXT NOT NULL, position INTEGER NOT NULL, "
            "message TEXT NOT NULL, PRIMARY KEY (session_id, position))"
        )
        with self.connection:
            self.connection.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)

    def read(self, session: str) -> list[dict[str, Any]]:
        """The session's messages in order, each decoded with `orjson.loads`."""
        cursor = self.connection.execute(
            "SELECT message FROM t WHERE session_id = ? ORDER BY position", (session,)
        )
        return [orjson.loads(row[0]) for row in cursor.fetchall()]

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


def active_rows(path: Path) -> list[tuple[str, int, str]]:
    """Every row of the store's `active_messages` table at `path`."""
    with sqlite3.connect(path) as connection:
        return connection.execute(
            "SELECT session_id, position, message FROM active_messages"
        ).fetchall()


# -- (c) the plain-sqlite3 baselines ----------------------------------------------------------


def _is_virtual(sql: str | None) -> bool:
    """Whether `sql` creates a virtual table (FTS5, say)."""
    return (sql or "").upper().startswith("CREATE VIRTUAL")


def copy_schema(c: sqlite3.Connection) -> list[str]:
    """The DDL of the views as they are in the file, renamed with COPY_PREFIX: their tables,
    indexes and triggers, and the tables those triggers write. (Not the search index: it is
    filled by the first search after a rebuild, not by the rebuild.)"""
    objects = c.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master "
        "WHERE sql IS NOT NULL AND substr(name, 1, ?) != ?",
        (len(COPY_PREFIX), COPY_PREFIX),
    ).fetchall()
    tables = {name for kind, name, _, _ in objects if kind == "table"}
    virtual = {name for kind, name, _, sql in objects if kind == "table" and _is_virtual(sql)}
    shadow = {name for name in tables if any(name.startswith(v + "_") for v in virtual)}
    copied = {*VIEWS, "stored_events"}
    for kind, _, table, sql in objects:
        if kind == "trigger" and table in copied:
            copied |= {t for t in tables - shadow if re.search(rf"\b{re.escape(t)}\b", sql)}
    chosen = [o for o in objects if o[2] in copied and o[1] not in shadow]
    names = sorted({name for _, name, _, _ in chosen}, key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    order = {"table": 0, "index": 1, "trigger": 2}
    chosen.sort(key=lambda o: order.get(o[0], 3))
    return [pattern.sub(lambda m: COPY_PREFIX + m.group(1), sql) for _, _, _, sql in chosen]


class _CopyBatch:
    """The rows one batch of events writes, built from the decoded payloads by plain code.

    `active_messages` is a view of the history rows above their session's position base.
    A compaction (version 2: the first `replaced` active messages, of which it keeps `kept`,
    then `order`) marks the rest of that range superseded where they are (positions are
    never reused) and moves the base above every position the session has; at the end of
    the batch every active message of a compacted session is given its position above the
    base (stored rows by UPDATE)."""

    HISTORY = f"INSERT INTO {COPY_PREFIX}message_history VALUES ({','.join('?' * 14)})"
    ATTEMPT = f"INSERT INTO {COPY_PREFIX}compaction_attempts VALUES ({','.join('?' * 16)})"
    SESSION = f"INSERT OR REPLACE INTO {COPY_PREFIX}sessions VALUES ({','.join('?' * 19)})"
    SUPERSEDE = (
        f"UPDATE {COPY_PREFIX}message_history SET active = 0, superseded_by = ? "
        "WHERE session_id = ? AND message_id = ?"
    )
    PLACE = (
        f"UPDATE {COPY_PREFIX}message_history SET position = ? "
        "WHERE session_id = ? AND message_id = ?"
    )

    def __init__(self, sessions: dict[str, list[Any]], actives: dict[str, list[str]]) -> None:
        """No rows yet; `sessions` holds every session's row so far (by transcript id), and
        `actives` its active message ids in order: both kept from batch to batch."""
        self.all_sessions, self.actives = sessions, actives
        self.history: dict[tuple[str, str], list[Any]] = {}
        self.attempts: list[tuple[Any, ...]] = []
        self.superseded: list[tuple[str, str, str]] = []
        self.placed: list[tuple[int, str, str]] = []  # stored rows' new positions, in order
        self.compacted: set[str] = set()
        self.position = 0  # of the event being taken
        self.appended: dict[str, int] = {}  # by transcript id: messages appended (new rows)
        self.sessions: dict[str, list[Any]] = {}

    def take(self, position: int, originator: str, number: int, kind: str, data: Any) -> None:
        """The rows of one decoded event, stored at `position` in the log."""
        self.position = position
        at = data["timestamp"]["_data_"]
        if kind == "Started":
            metadata = orjson.dumps(data["metadata"]).decode()
            row = [data["session_id"], originator, data["source"], data["model"],
                   data["parent_id"], metadata, at, at, number, 0, 0, 0, 0, 0, None, 0,
                   "{}", 0, 0]  # fmt: skip
            self.all_sessions[originator], self.actives[originator] = row, []
        else:
            row, active = self.all_sessions[originator], self.actives[originator]
            if kind == "MessageAppended":
                active.append(data["message_id"])
                self.appended[originator] = self.appended.get(originator, 0) + 1
                self.message(row, data["message_id"], data["message"], None, at, number)
            elif kind == "CompactionCommitted":
                self.compaction(originator, row, active, data, at, number)
            elif kind == "CompactionFailed":
                row[12] += 1
                self.attempt(row[0], data, number, "failed", data["would_supersede"], [], at)
            row[7], row[8], row[10] = at, number, len(active)
        self.sessions[originator] = row

    def compaction(
        self, originator: str, row: list[Any], active: list[str], data: Any, at: str, number: int
    ) -> None:
        """A committed compaction's rows; `active` becomes the new active list."""
        kept, by = set(data["kept"]), data["compaction_id"]
        superseded = [i for i in active[: data["replaced"]] if i not in kept]
        self.place(originator, row)  # the places the rows have before it
        for message_id in superseded:
            pending = self.history.get((row[0], message_id))
            if pending is None:
                self.superseded.append((by, row[0], message_id))
            else:
                pending[5], pending[6] = 0, by
        row[18] += len(active)  # above every position the session has
        active[:] = data["order"] + active[data["replaced"] :]
        for new in data["added"]:
            self.message(row, new["id"], new["message"], by, at, number)
        row[11], row[17] = row[11] + 1, number
        self.compacted.add(originator)
        added = [new["id"] for new in data["added"]]
        self.attempt(row[0], data, number, "committed", superseded, added, at)

    def message(
        self, row: list[Any], message_id: str, content: dict[str, Any], by: str | None,
        at: str, number: int,
    ) -> None:  # fmt: skip
        """A message's history row; counts it in its session's row."""
        row[9] += 1
        text = orjson.dumps({"id": message_id, **content}).decode()
        self.history[(row[0], message_id)] = [
            row[0], row[9], message_id, content["role"], text, 1, None, by, at, number, None,
            None, None, self.position,
        ]  # fmt: skip

    def attempt(
        self, session_id: str, data: Any, number: int, status: str, superseded: list[str],
        added: list[str], at: str,
    ) -> None:  # fmt: skip
        """A compaction attempt's row."""
        self.attempts.append((
            data["compaction_id"], session_id, number, status, data["reason"],
            data.get("failure"), data.get("error"), data["based_on_version"], len(superseded),
            len(added), orjson.dumps(superseded).decode(), orjson.dumps(added).decode(),
            data["tokens_before"], data["tokens_after"], at,
            orjson.dumps(data["metadata"]).decode() if "metadata" in data else None,
        ))  # fmt: skip

    def place(self, originator: str, row: list[Any]) -> None:
        """Give the session's active messages that have no place yet theirs above its base:
        every one once it was compacted in this batch, else those appended by it."""
        active = self.actives[originator]
        first = (
            1
            if originator in self.compacted
            else len(active) - self.appended.get(originator, 0) + 1
        )
        for position, message_id in enumerate(active[first - 1 :], row[18] + first):
            pending = self.history.get((row[0], message_id))
            if pending is None:
                self.placed.append((position, row[0], message_id))
            else:
                pending[12] = position

    def write(self, c: sqlite3.Connection) -> None:
        """Write the batch's rows (in the caller's transaction): superseded stored rows leave
        the active list where they are, stored rows move above the base (no row has a
        position there yet), then the new rows are inserted with theirs."""
        for originator, row in self.sessions.items():
            self.place(originator, row)
        c.executemany(self.SUPERSEDE, self.superseded)
        c.executemany(self.PLACE, self.placed)
        c.executemany(self.HISTORY, self.history.values())
        c.executemany(self.ATTEMPT, self.attempts)
        c.executemany(self.SESSION, self.sessions.values())


class PlainCopy:
    """Writes the rows the views hold with plain sqlite3, into copies of the views' tables."""

    def __init__(self, path: Path, batch: int = REBUILD_BATCH) -> None:
        """A connection to the store file at `path`; `batch` events per transaction."""
        self.connection = sqlite3.connect(path, isolation_level=None, timeout=60)
        self.batch = batch

    def reset(self) -> None:
        """Fresh, empty copies of the views' tables (and of the raw events table)."""
        c = self.connection
        c.execute("BEGIN IMMEDIATE")
        self._drop(c)
        for statement in copy_schema(c):
            c.execute(statement)
        c.execute(f"CREATE TABLE {COPY_PREFIX}progress (position INTEGER NOT NULL)")
        c.execute(f"INSERT INTO {COPY_PREFIX}progress VALUES (0)")
        c.execute("COMMIT")

    def drop(self) -> None:
        """Drop the copies."""
        self.connection.execute("BEGIN IMMEDIATE")
        self._drop(self.connection)
        self.connection.execute("COMMIT")

    @staticmethod
    def _drop(c: sqlite3.Connection) -> None:
        """Drop every view and table named with COPY_PREFIX (in the caller's transaction)."""
        for (name,) in c.execute(
            "SELECT name FROM sqlite_master WHERE type = 'view' AND substr(name, 1, ?) = ?",
            (len(COPY_PREFIX), COPY_PREFIX),
        ).fetchall():
            c.execute(f'DROP VIEW "{name}"')
        copies = c.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND substr(name, 1, ?) = ?",
            (len(COPY_PREFIX), COPY_PREFIX),
        ).fetchall()
        virtual_first = sorted(copies, key=lambda row: not _is_virtual(row[1]))
        for name, _ in virtual_first:  # a virtual table drops its shadow tables with it
            c.execute(f'DROP TABLE IF EXISTS "{name}"')

    def copy(self) -> int:
        """Stream the log and write the view rows, one transaction per batch of events."""
        c = self.connection
        sessions: dict[str, list[Any]] = {}  # transcript id -> its sessions row, as a list
        actives: dict[str, list[str]] = {}  # transcript id -> its active message ids
        position = done = 0
        while True:
            rows = c.execute(
                "SELECT rowid, originator_id, originator_version, topic, state FROM stored_events "
                "WHERE rowid > ? ORDER BY rowid LIMIT ?",
                (position, self.batch),
            ).fetchall()
            if not rows:
                return done
            batch = _CopyBatch(sessions, actives)
            for rowid, originator, number, topic, state in rows:
                batch.take(rowid, originator, number, topic[len(TOPIC) :], orjson.loads(state))
            c.execute("BEGIN IMMEDIATE")
            batch.write(c)
            position = rows[-1][0]
            c.execute(f"UPDATE {COPY_PREFIX}progress SET position = ?", (position,))
            c.execute("COMMIT")
            done += len(rows)

    def insert_select(self) -> int:
        """The floor: copy the raw event rows, no decoding, in the same transactions."""
        c = self.connection
        head = c.execute("SELECT MAX(rowid) FROM stored_events").fetchone()[0] or 0
        for first in range(0, head, self.batch):
            c.execute("BEGIN IMMEDIATE")
            c.execute(
                f"INSERT INTO {COPY_PREFIX}stored_events SELECT * FROM stored_events "
                "WHERE rowid > ? AND rowid <= ?",
                (first, first + self.batch),
            )
            c.execute("COMMIT")
        return head

    def counts(self) -> dict[str, tuple[int, int]]:
        """Rows per view: (live view, plain copy) — the copy should match the view."""
        c = self.connection
        return {
            view: (
                c.execute(f"SELECT COUNT(*) FROM {view}").fetchone()[0],
                c.execute(f"SELECT COUNT(*) FROM {COPY_PREFIX}{view}").fetchone()[0],
            )
            for view in VIEWS
        }

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()
