"""Erasure on PostgreSQL: the version fence, and vacuuming the tables an erasure deleted from.

- The version fence: a trigger refuses an event whose version is not above every stored
  version of its stream (as a unique violation, so the library raises IntegrityError and the
  store retries). Without it, once an erasure deleted versions 1..n, a writer holding a stale
  copy of the transcript could store version k < n after the tombstone.
- The erasure's transaction (the log's, see `transactions`: its session's lock, a place in
  the log's order after every earlier event of its session) inserts the tombstone and
  deletes the earlier events: followers see the tombstone, never a half-erased stream.
- `scrub` vacuums the log and the view tables, so the space of the deleted rows is reused
  soon (the library's table has autovacuum tuned to wait for 100 million dead rows). VACUUM
  does not overwrite that space: the bytes stay in the data files until PostgreSQL reuses it,
  and in WAL segments and backups until they are recycled. `VACUUM FULL` rewrites the files.
"""

from __future__ import annotations

from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from psycopg.sql import SQL, Identifier

from ..sql.schema import LIVE

FENCE = "{table}_version_fence"
DERIVED_TABLES = ("message_search",)  # derived from the views (full-text search), if present


def has_fence(datastore: PostgresDatastore, events_table: str) -> bool:
    with datastore.get_connection() as connection:
        row = connection.execute(
            "SELECT 1 AS found FROM pg_trigger WHERE tgname = %s "
            "AND tgrelid = to_regclass(format('%%I.%%I', %s::text, %s::text))",
            (FENCE.format(table=events_table), datastore.schema, events_table),
        ).fetchone()
    return row is not None


def create_fence(datastore: PostgresDatastore, events_table: str) -> None:
    """Create (or replace) the version fence: a function and its trigger."""
    name = Identifier(FENCE.format(table=events_table))
    schema, table = Identifier(datastore.schema), Identifier(events_table)
    function = SQL(
        "CREATE OR REPLACE FUNCTION {schema}.{name}() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN IF EXISTS (SELECT 1 FROM {schema}.{table} "
        "WHERE originator_id = NEW.originator_id "
        "AND originator_version >= NEW.originator_version) THEN "
        "RAISE EXCEPTION 'a later version of this stream is stored' "
        "USING ERRCODE = 'unique_violation'; END IF; RETURN NEW; END $$"
    ).format(schema=schema, name=name, table=table)
    trigger = SQL(
        "CREATE OR REPLACE TRIGGER {name} BEFORE INSERT ON {schema}.{table} "
        "FOR EACH ROW EXECUTE FUNCTION {schema}.{name}()"
    ).format(schema=schema, name=name, table=table)
    with datastore.transaction(commit=True) as cursor:
        cursor.execute(function)
        cursor.execute(trigger)


def scrub(log: Application[UUID]) -> None:
    """Vacuum the log and the view tables, so the deleted rows' space is reused soon."""
    recorder = log.recorder
    assert isinstance(recorder, PostgresApplicationRecorder)
    datastore = recorder.datastore
    names = (recorder.events_table_name, *LIVE.names(), *DERIVED_TABLES)
    with datastore.get_connection() as connection:
        present = [
            name
            for name in names
            if connection.execute(
                "SELECT to_regclass(format('%%I.%%I', %s::text, %s::text)) AS found",
                (datastore.schema, name),
            ).fetchone()["found"]  # type: ignore[index]
            is not None
        ]
        tables = SQL(", ").join(
            SQL("{}.{}").format(Identifier(datastore.schema), Identifier(name)) for name in present
        )
        connection.execute(
            SQL("SET lock_timeout = '{}s'").format(SQL(str(max(1, datastore.lock_timeout))))
        )
        try:
            connection.execute(SQL("VACUUM {}").format(tables))
        finally:
            connection.execute("RESET lock_timeout")
