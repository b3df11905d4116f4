"""Plain SQL on a PostgreSQL store's database, with psycopg alone (support/rows.py reads the
views and the log of either backend with it)."""

from __future__ import annotations

import socket
from typing import Any

import psycopg

from transcripts.application.storage import StoreConfig

EVENTS_TABLE = "transcripts_events"
TRACKING_TABLE = "transcripts_positions"  # the views' marks (the library's: transcripts_tracking)


def connect(url: str, **kwargs: Any) -> psycopg.Connection[Any]:
    location = StoreConfig.from_url(url).location
    assert location is not None, url
    return psycopg.connect(**location.connection_kwargs(), autocommit=True, **kwargs)


def sql(url: str, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement on the store's database; its rows (none for a statement without)."""
    with connect(url) as connection:
        cursor = connection.execute(statement, params)  # type: ignore[arg-type]
        return cursor.fetchall() if cursor.description else []


def tables(url: str) -> set[str]:
    """The names of the tables and SQL views in the database's public schema."""
    rows = sql(
        url,
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
        "UNION SELECT viewname FROM pg_views WHERE schemaname = 'public'",
    )
    return {name for (name,) in rows}


CATALOG = r"""
    SELECT 'class', c.relname, c.relkind::text FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT LIKE 'pg\_%%'
        AND n.nspname <> 'information_schema'
    UNION ALL SELECT 'proc', p.proname, '' FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname NOT LIKE 'pg\_%%'
        AND n.nspname <> 'information_schema'
    UNION ALL SELECT 'type', t.typname, '' FROM pg_type t
      JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname NOT LIKE 'pg\_%%'
        AND n.nspname <> 'information_schema'
    UNION ALL SELECT 'namespace', nspname, '' FROM pg_namespace
    ORDER BY 1, 2, 3
"""


def catalog(url: str) -> list[tuple[str, str, str]]:
    """What the database defines: relations, functions, types, schemas (to check that
    nothing was installed)."""
    return [tuple(row) for row in sql(url, CATALOG)]  # type: ignore[misc]


def with_database(url: str, dbname: str) -> str:
    """The same server and credentials, another database."""
    return url.rsplit("/", 1)[0] + "/" + dbname


def free_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
