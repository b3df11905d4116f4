"""The PostgreSQL backend: the library's PostgreSQL module, and the views beside the log.

- `prepare` connects once before anything else, so that an unreachable server, a database
  that does not exist or credentials the server refuses fail at once with one clear
  `StorageError` — before a pool is opened or anything is written.
- `open_views` creates the tables the store needs (the library's log and tracking tables,
  the view tables) if some are missing, one process at a time under a session advisory
  lock: the library's `CREATE … IF NOT EXISTS` statements race when processes open a new
  database at once.
- `replace_stream` and `scrub` erase a session (`postgres_erasure`), whose version fence
  `open_views` creates with the tables.
- `TranscriptRecorder` is the library's application recorder, minus the library's own retry
  of failed inserts (10 tries, 0.2 s apart): the store retries every failed write itself,
  with exponential backoff and jitter, up to its lock timeout.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from uuid import UUID

import psycopg
from eventsourcing.application import Application
from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore

from ....config import PostgresLocation, StoreConfig
from ....domain.errors import StorageError
from ....projections.projector import Projector
from ..sealing import SETTINGS_TABLE
from ..sql.schema import QUARANTINE, VERSIONS_TABLE
from . import erasure
from .views import PostgresTranscriptViews, advisory_key

CHECK_TIMEOUT = 10  # seconds to reach the server when a store opens


class TranscriptRecorder(PostgresApplicationRecorder):
    """The library's recorder; a failed insert is retried by the store, not here."""

    insert_events = PostgresApplicationRecorder.insert_events.__wrapped__  # type: ignore[attr-defined]


class PostgresBackend:
    def prepare(self, config: StoreConfig) -> None:
        assert config.postgres is not None
        check_connection(config.postgres, min(CHECK_TIMEOUT, max(2, round(config.lock_timeout))))

    def open_views(
        self, log: Application[UUID], projector: type[Projector]
    ) -> PostgresTranscriptViews:
        recorder = log.recorder
        assert isinstance(recorder, PostgresApplicationRecorder)
        datastore = recorder.datastore
        views = PostgresTranscriptViews(
            datastore,
            mapper=log.mapper,
            projector=projector,
            recorder=recorder,
            tracking_table=tracking_table_name(log),
        )
        required = [
            recorder.events_table_name,
            views.tracking_table,
            "active_messages",
            "message_history",
            "compaction_attempts",
            "sessions",
            QUARANTINE,
            VERSIONS_TABLE,
            SETTINGS_TABLE,
        ]
        if not _all_exist(datastore, required, recorder.stored_event_type_name):
            with _schema_lock(datastore, recorder.events_table_name):
                recorder.create_table()
                views.create_table()
        if not erasure.has_fence(datastore, recorder.events_table_name):
            with _schema_lock(datastore, recorder.events_table_name):
                erasure.create_fence(datastore, recorder.events_table_name)
        return views

    def replace_stream(self, log: Application[UUID], tombstone: StoredEvent) -> None:
        erasure.replace_stream(log, tombstone)

    def scrub(self, log: Application[UUID]) -> None:
        erasure.scrub(log)


POSTGRES = PostgresBackend()


def tracking_table_name(log: Application[UUID]) -> str:
    """The library's name for an application's tracking table."""
    return f"{log.name.lower()}_tracking"


def check_connection(location: PostgresLocation, timeout: int) -> None:
    """Connect once; raise a StorageError that says why if the server refuses."""
    try:
        psycopg.connect(**location.connection_kwargs(), connect_timeout=timeout).close()
    except psycopg.Error as error:
        raise StorageError(
            f"cannot connect to PostgreSQL at {location.url}: {connection_failure(error)}"
        ) from None


def connection_failure(error: BaseException) -> str:
    """The server's reason for refusing a connection, in one line, with a hint if any."""
    text = " ".join(str(error).split())
    reason = text.split("FATAL:", 1)[1].strip() if "FATAL:" in text else text
    reason = reason.removeprefix("connection failed:").strip()
    if "does not exist" in reason and "database" in reason:
        reason += " (create it first, e.g. `createdb NAME`: the store creates its tables)"
    return reason


def _all_exist(datastore: PostgresDatastore, tables: list[str], type_name: str) -> bool:
    schema = datastore.schema
    with datastore.get_connection() as connection:
        row = connection.execute(
            "SELECT bool_and(to_regclass(format('%%I.%%I', %s::text, name)) IS NOT NULL) "
            "AS tables, "
            "to_regtype(format('%%I.%%I', %s::text, %s::text)) IS NOT NULL AS type "
            "FROM unnest(%s::text[]) AS name",
            (schema, schema, type_name, tables),
        ).fetchone()
    assert row is not None
    return bool(row["tables"] and row["type"])


@contextmanager
def _schema_lock(datastore: PostgresDatastore, events_table: str) -> Iterator[None]:
    """Hold a session advisory lock while the tables are created (on other connections)."""
    key = advisory_key("schema", events_table)
    with datastore.get_connection() as connection:
        connection.execute(f"SET lock_timeout = '{max(1, datastore.lock_timeout) * 1000}ms'")
        try:
            connection.execute("SELECT pg_advisory_lock(%s)", (key,))
            try:
                yield
            finally:
                connection.execute("SELECT pg_advisory_unlock(%s)", (key,))
        finally:
            connection.execute("RESET lock_timeout")
