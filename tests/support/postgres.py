"""Helpers of the PostgreSQL tests: plain SQL on a store's database, with psycopg alone."""

from __future__ import annotations

import socket
from typing import Any

import psycopg

from transcripts.config import StoreConfig

EVENTS_TABLE = "transcripts_events"
TRACKING_TABLE = "transcripts_tracking"
VIEW_TABLES = ("active_messages", "message_history", "compaction_attempts", "sessions")


def connect(url: str, **kwargs: Any) -> psycopg.Connection[Any]:
    location = StoreConfig.from_url(url).postgres
    assert location is not None, url
    return psycopg.connect(**location.connection_kwargs(), autocommit=True, **kwargs)


def sql(url: str, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement on the store's database; its rows (none for a statement without)."""
    with connect(url) as connection:
        cursor = connection.execute(statement, params)  # type: ignore[arg-type]
        return cursor.fetchall() if cursor.description else []


def tables(url: str) -> set[str]:
    rows = sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    return {name for (name,) in rows}


def tracked(url: str) -> int:
    rows = sql(
        url,
        f"SELECT notification_id FROM {TRACKING_TABLE} WHERE application_name = 'transcripts'",
    )
    return rows[0][0] if rows else 0


def head(url: str) -> int:
    return sql(url, f"SELECT COALESCE(MAX(notification_id), 0) FROM {EVENTS_TABLE}")[0][0]


def active_ids(url: str, session_id: str) -> list[str]:
    rows = sql(
        url,
        "SELECT message_id FROM active_messages WHERE session_id = %s ORDER BY position",
        (session_id,),
    )
    return [message_id for (message_id,) in rows]


def row_counts(url: str) -> dict[str, int]:
    return {table: sql(url, f"SELECT COUNT(*) FROM {table}")[0][0] for table in VIEW_TABLES}


def with_database(url: str, dbname: str) -> str:
    """The same server and credentials, another database."""
    return url.rsplit("/", 1)[0] + "/" + dbname


def free_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
