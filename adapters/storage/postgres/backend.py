"""The PostgreSQL backend: `postgresql://user:password@host:port/dbname` (or `postgres://`).

- The log is the library's PostgreSQL module (`transcripts_events`: named after the
  application, `transcripts`, which never changes); the views track their marks in
  `transcripts_positions` (not the library's `transcripts_tracking`, which stores of the
  releases before created and keep). The store writes the log in transactions of its own
  (`transactions`), and retries a failed write itself, with exponential backoff and
  jitter, up to its lock timeout.
- `prepare` connects once before anything else, so that an unreachable server, a database
  that does not exist or credentials the server refuses fail at once with one clear
  `StorageError` — before a pool is opened or anything is written.
- `open_views` creates the tables the store needs (the library's log table, the view
  tables and their marks) if some are missing, one process at a time under a session advisory
  lock: the library's `CREATE … IF NOT EXISTS` statements race when processes open a new
  database at once.
- `replace_stream` and `scrub` erase a session (`erasure`), whose version fence
  `open_views` creates with the tables.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from uuid import UUID
from weakref import WeakKeyDictionary

import psycopg
from eventsourcing.application import Application
from eventsourcing.persistence import IntegrityError
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from eventsourcing.utils import get_topic

from ....application.storage import Backend, Failure, StoreConfig
from ....domain.errors import StorageError, StoreNotFoundError
from ....projections.projector import Projector
from ..environment import shared_env
from ..internals import without_retry
from ..sealing import SETTINGS_TABLE
from ..sql.log_index import IndexTypes, LogIndex, StoredIndex
from ..sql.schema import QUARANTINE, VERSIONS_TABLE
from ..sql.search import NoSearch
from ..sql.views import SQLTranscriptViews
from . import erasure
from .advisory import advisory_key
from .dialect import ID_DIGEST_FUNCTION, OUTDATED_DIGEST, PostgresDialect
from .follow import LogFollower
from .location import URL_FORM, PostgresLocation, parse_url
from .search import PostgresSearchIndex
from .snapshots import read_snapshot
from .transactions import SYNCHRONOUS_COMMIT, PostgresLogTransaction, log_transaction

CHECK_TIMEOUT = 10  # seconds to reach the server when a store opens
POOL_SIZE = 2  # connections a store keeps open
MAX_OVERFLOW = 6  # more, opened under load (a follower holds one to LISTEN)
MIN_CONNECT_TIMEOUT = 5  # seconds to get a connection from the pool
EVENTS_TABLE = "transcripts_events"  # the library's table of the `transcripts` application
# What waiting does not cure (SQLSTATE): a full disk, an I/O error, a read-only server.
_LASTING_STATES = frozenset({"53100", "58030", "25006"})
# The server ended the connection (an administrator, a shutdown, a crash): "08…" too.
_DROPPED_STATES = frozenset({"57P01", "57P02", "57P03"})
INDEX_TYPES = IndexTypes(stream="uuid", digest="bytea", integer="bigint", boolean="boolean")


class TranscriptRecorder(PostgresApplicationRecorder):
    """The library's recorder, whose reads fail at once: the store retries a failed read
    itself (backoff, up to its lock timeout) instead of the library's 10 tries 0.2 s apart."""

    select_events = without_retry(PostgresApplicationRecorder.select_events)
    select_notifications = without_retry(PostgresApplicationRecorder.select_notifications)
    max_notification_id = without_retry(PostgresApplicationRecorder.max_notification_id)


class PostgresBackend(Backend):
    url_forms = (URL_FORM,)

    def __init__(self) -> None:
        self._indexes: WeakKeyDictionary[Application[UUID], LogIndex] = WeakKeyDictionary()

    def locate(self, url: str) -> PostgresLocation:
        return parse_url(url)

    def library_env(self, config: StoreConfig) -> dict[str, str]:
        """The library's PostgreSQL module; the backend creates the tables (`CREATE_TABLE=n`
        here), one process at a time."""
        place = self._location(config)
        seconds = max(1, math.ceil(config.lock_timeout))  # the library's 0 would wait forever
        return {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "APPLICATION_RECORDER_TOPIC": get_topic(TranscriptRecorder),
            "POSTGRES_DBNAME": place.dbname,
            "POSTGRES_HOST": place.host,
            "POSTGRES_PORT": str(place.port),
            "POSTGRES_USER": place.user,
            "POSTGRES_PASSWORD": place.password,
            "POSTGRES_LOCK_TIMEOUT": str(seconds),
            "POSTGRES_CONNECT_TIMEOUT": str(max(MIN_CONNECT_TIMEOUT, seconds)),
            "POSTGRES_POOL_SIZE": str(POOL_SIZE),
            "POSTGRES_MAX_OVERFLOW": str(MAX_OVERFLOW),
            "CREATE_TABLE": "n",
            SYNCHRONOUS_COMMIT: "on" if config.durable else "off",
            **shared_env(config),
        }

    def classify(self, error: BaseException) -> Failure:
        if isinstance(error, IntegrityError):
            return Failure.CONFLICT
        cause = error.__cause__
        state = getattr(cause, "sqlstate", None)
        if state in _LASTING_STATES:
            return Failure.LASTING
        if state in _DROPPED_STATES or state and state.startswith("08"):
            return Failure.DROPPED
        if isinstance(cause, psycopg.OperationalError) and state is None:
            return Failure.DROPPED  # the client lost the connection (no server error)
        return Failure.BUSY

    def prepare(self, config: StoreConfig) -> None:
        timeout = min(CHECK_TIMEOUT, max(2, round(config.lock_timeout)))
        check_connection(self._location(config), timeout)

    def check_store(self, config: StoreConfig) -> None:
        place = self._location(config)
        check_connection(place, CHECK_TIMEOUT)
        try:
            with psycopg.connect(**place.connection_kwargs()) as connection:
                row = connection.execute(
                    "SELECT to_regclass(%s) IS NOT NULL", (EVENTS_TABLE,)
                ).fetchone()
        except psycopg.Error as error:
            raise StorageError(f"cannot read {place.url}: {connection_failure(error)}") from None
        if not (row and row[0]):
            raise StoreNotFoundError(place.url, "the database has no transcript store's log")

    def open_views(self, log: Application[UUID], projector: type[Projector]) -> SQLTranscriptViews:
        recorder = log.recorder
        assert isinstance(recorder, PostgresApplicationRecorder)
        datastore = recorder.datastore
        dialect = PostgresDialect(datastore, recorder.events_table_name)
        search = NoSearch() if log.mapper.cipher is not None else PostgresSearchIndex()
        views = SQLTranscriptViews(
            dialect, search, mapper=log.mapper, projector=projector, follower=LogFollower(recorder)
        )
        required = [
            recorder.events_table_name,
            dialect.positions,
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
                views.create_tables()
        if _digest_outdated(datastore):
            with _schema_lock(datastore, recorder.events_table_name):
                with datastore.transaction(commit=True) as cursor:
                    cursor.execute(ID_DIGEST_FUNCTION)
        if not erasure.has_fence(datastore, recorder.events_table_name):
            with _schema_lock(datastore, recorder.events_table_name):
                erasure.create_fence(datastore, recorder.events_table_name)
        self._index(log)
        return views

    def writing(
        self, log: Application[UUID], stream: UUID | None = None
    ) -> AbstractContextManager[PostgresLogTransaction]:
        assert isinstance(log.recorder, PostgresApplicationRecorder)
        return log_transaction(
            log.recorder,
            self._index(log),
            durable=log.env.get(SYNCHRONOUS_COMMIT) != "off",
            stream=stream,
        )

    def reading_lightly(self, log: Application[UUID]) -> AbstractContextManager[None]:
        return nullcontext()  # the server caches: its reads hold a page of rows at a time

    @contextmanager
    def reading_index(self, log: Application[UUID], stream_id: UUID) -> Iterator[StoredIndex]:
        assert isinstance(log.recorder, PostgresApplicationRecorder)
        with read_snapshot(log.recorder.datastore) as cursor:
            yield StoredIndex(self._index(log), cursor, stream_id)

    def reset_index(self, log: Application[UUID]) -> None:
        with self.writing(log) as tx:
            tx.log_index.reset(tx.cursor)

    def durability(self, log: Application[UUID]) -> dict[str, str]:
        """The server's `synchronous_commit` and `fsync` for the store's connections; at
        durability "normal" each log transaction sets `synchronous_commit` off itself."""
        assert isinstance(log.recorder, PostgresApplicationRecorder)
        with log.recorder.datastore.get_connection() as connection:
            with connection.cursor() as cursor:
                cursor.execute("SHOW synchronous_commit")
                synchronous_commit = cursor.fetchone()["synchronous_commit"]
                cursor.execute("SHOW fsync")
                fsync = cursor.fetchone()["fsync"]
        if log.env.get(SYNCHRONOUS_COMMIT) == "off":
            synchronous_commit = "off"
        return {"synchronous_commit": synchronous_commit, "fsync": fsync}

    def scrub(self, log: Application[UUID]) -> None:
        erasure.scrub(log)

    def _index(self, log: Application[UUID]) -> LogIndex:
        """The log's index of message ids, created with its tables if they are missing (one
        process at a time)."""
        index = self._indexes.get(log)
        if index is None:
            recorder = log.recorder
            assert isinstance(recorder, PostgresApplicationRecorder)
            datastore = recorder.datastore
            index = LogIndex(
                recorder.events_table_name,
                stream_key=lambda stream_id: stream_id,
                flag=bool,
                cipher=log.mapper.cipher,
                param="%s",
            )
            if not _all_exist(datastore, index.names(), recorder.stored_event_type_name):
                with _schema_lock(datastore, recorder.events_table_name):
                    with datastore.transaction(commit=True) as cursor:
                        for statement in index.create_statements(INDEX_TYPES):
                            cursor.execute(statement)
            with read_snapshot(datastore) as cursor:
                current = index.keys_current(cursor)
            if not current:  # a release before's keys: dropped once, under the write lock
                with log_transaction(recorder, index) as tx:
                    index.adopt_keys(tx.cursor)
            self._indexes[log] = index
        return index

    @staticmethod
    def _location(config: StoreConfig) -> PostgresLocation:
        assert isinstance(config.location, PostgresLocation)
        return config.location


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


def _digest_outdated(datastore: PostgresDatastore) -> bool:
    """Whether the id digest function is an earlier release's body, which PostgreSQL does not
    inline, in a UTF8 database (where the current body gives the same digests)."""
    with datastore.get_connection() as connection:
        row = connection.execute(
            "SELECT current_setting('server_encoding') = 'UTF8' "
            "AND COALESCE(position(%s in prosrc) > 0, false) AS outdated "
            "FROM (SELECT 1) AS one LEFT JOIN pg_proc "
            "ON pg_proc.oid = to_regprocedure(format('%%I.transcripts_id_key(text)', %s::text))",
            (OUTDATED_DIGEST, datastore.schema),
        ).fetchone()
    assert row is not None
    return bool(row["outdated"])


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
