"""The raw rows of a store's tables, read with plain SQL on either backend: the views, the
tracked position, the log. No code of the package's views is used, so checks built on these
share nothing with the projection.

A store is named by its URL: `sqlite:///…` is read with sqlite3, `postgresql://…` with
psycopg (support/postgres.py). Statements given to `query` use `?` placeholders.
"""

from __future__ import annotations

import sqlite3
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


def damage_event(url: str, session_id: str, version: int, damage: Callable[[bytes], bytes]) -> None:
    """Replace the stored state of event `version` of a session (a SQLite store) by
    `damage(state)`, in place, with plain SQL."""
    from transcripts.domain.transcript import transcript_id

    key = (transcript_id(session_id).hex, version)
    where = "WHERE originator_id = ? AND originator_version = ?"
    with connect(url) as db:
        (state,) = db.execute(f"SELECT state FROM stored_events {where}", key).fetchone()
        db.execute(f"UPDATE stored_events SET state = ? {where}", (damage(state), *key))
