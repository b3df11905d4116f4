"""The raw rows of a store's tables, read with plain SQL on either backend: the views, the
tracked position, the log, the tables there are; a stored event damaged in place; and a
SQLite file's write lock held by another connection. No code of the package's views is used,
so checks built on these share nothing with the projection.

A store is named by its URL: `sqlite:///…` is read with sqlite3, `postgresql://…` with
psycopg (support/postgres.py). Statements given to `query` use `?` placeholders.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

VIEW_TABLES = ("active_messages", "message_history", "compaction_attempts", "sessions")
# Every table a projection writes, with the key that orders its rows.
ORDERED_TABLES = {
    "active_messages": "session_id, position",
    "message_history": "session_id, seq",
    "compaction_attempts": "compaction_id",
    "sessions": "session_id",
    "quarantined_events": "position",
    "view_versions": "view",
}
TIMEOUT = 60.0  # seconds to wait for a lock: a killed writer's file may need recovery first


def path_of(url: str) -> Path:
    """The file of a SQLite store URL."""
    return Path(url.removeprefix("sqlite:///"))


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite:///")


@contextmanager
def connect(url: str) -> Iterator[sqlite3.Connection]:
    """A plain sqlite3 connection to a store file, committed on success."""
    with closing(sqlite3.connect(path_of(url), timeout=TIMEOUT)) as connection:
        with connection:
            yield connection


@contextmanager
def write_lock_held(url: str, seconds: float) -> Iterator[None]:
    """Hold the write lock of a SQLite store from another connection (BEGIN IMMEDIATE): from
    entering the block until it ends or `seconds` pass, whichever comes first."""
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        connection = sqlite3.connect(path_of(url), isolation_level=None)
        try:
            connection.execute("BEGIN IMMEDIATE")
            locked.set()
            release.wait(seconds)
            connection.execute("ROLLBACK")
        finally:
            connection.close()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert locked.wait(10), "could not take the SQLite write lock"
    try:
        yield
    finally:
        release.set()
        thread.join()


def query(url: str, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The rows of one statement (`?` placeholders) on the store's database."""
    if is_sqlite(url):
        with connect(url) as db:
            return db.execute(statement, params).fetchall()
    from .postgres import sql

    return sql(url, statement.replace("?", "%s"), params)


def _tables(url: str) -> tuple[str, str, str]:
    """The names of the log table, its position column and the tracking table."""
    if is_sqlite(url):
        return "stored_events", "rowid", "tracking"
    from .postgres import EVENTS_TABLE, TRACKING_TABLE

    return EVENTS_TABLE, "notification_id", TRACKING_TABLE


def head(url: str) -> int:
    """The last log position (the notification id of the newest stored event)."""
    events, position, _ = _tables(url)
    return query(url, f"SELECT COALESCE(MAX({position}), 0) FROM {events}")[0][0]


def tracked(url: str) -> int:
    """The log position the live views reflect."""
    _, _, tracking = _tables(url)
    rows = query(
        url, f"SELECT notification_id FROM {tracking} WHERE application_name = 'transcripts'"
    )
    return rows[0][0] if rows else 0


def raw_rows(url: str) -> dict[str, list[tuple]]:
    """Every row of every view table, and the tracked position, as the driver returns them."""
    _, _, tracking = _tables(url)
    rows = {
        table: query(url, f"SELECT * FROM {table} ORDER BY {key}")
        for table, key in ORDERED_TABLES.items()
    }
    rows["tracking"] = query(
        url, f"SELECT * FROM {tracking} WHERE application_name = 'transcripts'"
    )
    return rows


def table_names(url: str) -> set[str]:
    """The names of every table and SQL view in the store's database."""
    if is_sqlite(url):
        return {
            name
            for (name,) in query(
                url, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
            )
        }
    from .postgres import tables

    return tables(url)


def row_counts(url: str) -> dict[str, int]:
    return {table: query(url, f"SELECT COUNT(*) FROM {table}")[0][0] for table in ORDERED_TABLES}


def active_ids(url: str, session_id: str) -> list[str]:
    """The message ids of a session's active_messages rows, in position order."""
    rows = query(
        url,
        "SELECT message_id FROM active_messages WHERE session_id = ? ORDER BY position",
        (session_id,),
    )
    return [message_id for (message_id,) in rows]


def log_rows(url: str) -> list[tuple[str, int, str, bytes]]:
    """The log as stored, byte for byte, in log order: (transcript id, version, topic, state)."""
    events, position, _ = _tables(url)
    rows = query(
        url,
        f"SELECT originator_id, originator_version, topic, state FROM {events} ORDER BY {position}",
    )
    return [(str(i).replace("-", ""), v, t, bytes(s)) for i, v, t, s in rows]


def damage_event(
    url: str,
    session_id: str,
    version: int,
    *,
    state: Callable[[bytes], bytes] | None = None,
    topic: str | None = None,
) -> None:
    """Damage event `version` of a session in place, with plain SQL: its stored state becomes
    `state(old state)`, its topic `topic` (either, or both)."""
    assert state is not None or topic is not None
    events, _, _ = _tables(url)
    where = "WHERE originator_id = ? AND originator_version = ?"
    params = (stream_key(url, session_id), version)
    [(old_state, old_topic)] = query(url, f"SELECT state, topic FROM {events} {where}", params)
    new_state = bytes(old_state) if state is None else state(bytes(old_state))
    query(
        url,
        f"UPDATE {events} SET state = ?, topic = ? {where}",
        (new_state, old_topic if topic is None else topic, *params),
    )


def store_raw_event(url: str, session_id: str, version: int, topic: str, state: bytes) -> None:
    """Store an event of a session as it is, with plain SQL: what an older release (or
    damage) may have left in the log."""
    events, _, _ = _tables(url)
    query(
        url,
        f"INSERT INTO {events} (originator_id, originator_version, topic, state) "
        "VALUES (?, ?, ?, ?)",
        (stream_key(url, session_id), version, topic, state),
    )


def delete_event(url: str, session_id: str, version: int) -> None:
    """Delete event `version` of a session from the log, with plain SQL."""
    events, _, _ = _tables(url)
    query(
        url,
        f"DELETE FROM {events} WHERE originator_id = ? AND originator_version = ?",
        (stream_key(url, session_id), version),
    )


def stream_key(url: str, session_id: str) -> Any:
    """A session's stream id as the backend stores it: hex text (SQLite), a uuid (PostgreSQL)."""
    from transcripts.domain.transcript import transcript_id

    key = transcript_id(session_id)
    return key.hex if is_sqlite(url) else key
