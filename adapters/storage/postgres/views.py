"""The read models on PostgreSQL: the same tables and columns as on SQLite, beside the log.

The logic is the dialect-neutral `SQLTranscriptViews`; this module gives it PostgreSQL's
transactions, types and catalog, on the library's `PostgresTrackingRecorder` (tracking in
`transcripts_tracking`, the log in `transcripts_events`, positions are `notification_id`s).

- A view transaction takes a transaction-level advisory lock first (keyed by the events
  table), so that one process at a time projects, and commits with
  `synchronous_commit = off`: the views are derived data, and a crash can only lose their
  tail together with its tracked position, which the next catch-up projects again.
- Queries read in one `REPEATABLE READ` snapshot: the log head, the tracked position and
  every row of a query come from the same moment.
- Columns: text ids sorted by their bytes (`COLLATE "C"`, as SQLite sorts), `json` messages
  (kept exactly as written: key order, and `\\u0000` escapes `jsonb` would refuse),
  `timestamptz` times, `boolean` flags, `bigint` numbers.
- `follow` uses the library's LISTEN/NOTIFY subscription of the log.
- Full-text search is `message_search`, search vectors fed by triggers on `message_history`
  (`postgres_search`), swapped in with the views on a rebuild; a store made before search
  existed gets it (filled) when opened.
"""

from __future__ import annotations

import hashlib
import queue
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from uuid import UUID

import orjson
import psycopg
from eventsourcing.persistence import Mapper, Notification, PersistenceError
from eventsourcing.postgres import (
    PostgresApplicationRecorder,
    PostgresDatastore,
    PostgresTrackingRecorder,
)
from psycopg.adapt import Loader
from psycopg.sql import SQL

from ....application import backoff
from ....domain.errors import StorageError
from ....projections.projector import Projector
from ..sql.schema import LIVE, NEXT, REBUILD_SUFFIX, ColumnTypes, Tables
from ..sql.views import BATCH_SIZE, TRACKING_NAME, Followed, SQLTranscriptViews
from . import search

POSTGRES_COLUMNS = ColumnTypes(
    text='TEXT COLLATE "C"',
    long_text="TEXT",
    integer="BIGINT",
    boolean="BOOLEAN",
    json="JSON",
    time="TIMESTAMPTZ",
)
ARRIVALS_WAIT = 0.1  # seconds between checks of the stop event while nothing arrives


def advisory_key(purpose: str, table: str) -> int:
    """A stable 64-bit advisory lock key for one purpose on one store's tables."""
    digest = hashlib.blake2b(f"transcripts:{purpose}:{table}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class _OrjsonLoader(Loader):
    """Reads `json` columns with orjson (psycopg's default is the json module)."""

    def load(self, data: Any) -> Any:
        return orjson.loads(data)


@lru_cache(maxsize=512)
def _pyformat(query: str) -> str:
    return query.replace("?", "%s")


class QmarkCursor:
    """A psycopg cursor that takes the `?` placeholders the dialect-neutral SQL is written
    with. Queries of other types (the library's composed SQL) pass through unchanged."""

    __slots__ = ("cursor",)

    def __init__(self, cursor: psycopg.Cursor[Any]) -> None:
        self.cursor = cursor

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> QmarkCursor:
        self.cursor.execute(_pyformat(query) if isinstance(query, str) else query, params, **kwargs)
        return self

    def executemany(self, query: str, params: Sequence[Sequence[Any]]) -> None:
        self.cursor.executemany(_pyformat(query), params)

    def fetchone(self) -> Any:
        return self.cursor.fetchone()

    def fetchall(self) -> list[Any]:
        return self.cursor.fetchall()


class PostgresTranscriptViews(SQLTranscriptViews, PostgresTrackingRecorder):
    """The views of one PostgreSQL store, in the log's database and connection pool."""

    COLUMNS = POSTGRES_COLUMNS
    POSITION = "notification_id"
    CIPHERTEXT_AS_TEXT = True
    SEARCH = staticmethod(search.search)

    def __init__(
        self,
        datastore: PostgresDatastore,
        *,
        mapper: Mapper[UUID],
        projector: type[Projector] = Projector,
        recorder: PostgresApplicationRecorder,
        tracking_table: str,
    ) -> None:
        self.mapper = mapper
        self.projector = projector
        self.recorder = recorder
        self.events_table = recorder.events_table_name
        self.tracking_table = tracking_table
        super().__init__(datastore, tracking_table_name=tracking_table)
        self.sql_create_statements.extend(SQL(s) for s in self.view_create_statements())  # type: ignore[arg-type]
        lock_ms = max(1, datastore.lock_timeout) * 1000
        self._write_lock = (
            "SET LOCAL synchronous_commit = off; "
            f"SET LOCAL lock_timeout = '{lock_ms}ms'; "
            f"SELECT pg_advisory_xact_lock({advisory_key('views', self.events_table)})"
        )

    # -- dialect hooks ---------------------------------------------------------------------

    @staticmethod
    def _load_json(value: Any) -> Any:
        return value  # already decoded by the cursor's loader

    @staticmethod
    def _load_time(value: datetime) -> datetime:
        return value.astimezone(UTC)

    @staticmethod
    def _time_param(value: datetime) -> datetime:
        return value

    _bool_param = staticmethod(bool)

    @contextmanager
    def _reading(self) -> Iterator[QmarkCursor]:
        with self.datastore.transaction(commit=False) as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            cursor.adapters.register_loader("json", _OrjsonLoader)
            yield QmarkCursor(cursor)

    @contextmanager
    def _writing(self, *, rebuilding: bool = False) -> Iterator[QmarkCursor]:
        with self.datastore.transaction(commit=True) as cursor:
            cursor.execute(self._write_lock)
            cursor.adapters.register_loader("json", _OrjsonLoader)
            yield QmarkCursor(cursor)

    def _table_exists(self, c: QmarkCursor, name: str) -> bool:
        c.execute("SELECT to_regclass(?) IS NOT NULL AS found", (self._qualified(name),))
        return bool(c.fetchone()["found"])

    def _user_indexes(self, c: QmarkCursor, tables: Sequence[str]) -> list[str]:
        c.execute(
            "SELECT pg_get_indexdef(i.indexrelid) AS statement FROM pg_index i "
            "JOIN pg_class t ON t.oid = i.indrelid "
            "JOIN pg_namespace n ON n.oid = t.relnamespace "
            "WHERE n.nspname = ? AND t.relname = ANY(?) "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)",
            (self.datastore.schema, list(tables)),
        )
        return [row["statement"] for row in c.fetchall()]

    def _derived_statements(self, tables: Tables) -> list[str]:
        if self.content.encrypted:  # an index of ciphertext finds nothing
            return []
        # The functions are made with the live tables (a rebuild finds them there).
        functions = search.function_statements() if tables is LIVE else []
        return [
            *functions,
            *search.table_statements(tables.message_history),
            *search.trigger_statements(tables.message_history),
        ]

    def _derived_tables(self, tables: Tables) -> list[str]:
        return [] if self.content.encrypted else [search.search_table(tables.message_history)]

    def _before_swap(self, c: QmarkCursor) -> None:
        for statement in search.drop_trigger_statements(NEXT.message_history):
            c.execute(statement)

    def _after_swap(self, c: QmarkCursor) -> None:
        if self.content.encrypted:
            return
        history = LIVE.message_history
        for statement in [
            *search.rename_index_statements(NEXT.message_history, history),
            *search.trigger_statements(history),
        ]:
            c.execute(statement)

    def ensure_current(self) -> None:
        """Give a store made before full-text search existed its search table, then as usual."""
        if not self.content.encrypted:
            with self._reading() as c:
                searchable = self._table_exists(c, search.search_table(LIVE.message_history))
            if not searchable:
                with self._writing() as c:
                    for statement in self._derived_statements(LIVE):
                        c.execute(statement)
                    c.execute(search.backfill_statement(LIVE.message_history))
        super().ensure_current()

    def _swap_table(self, c: QmarkCursor, live: str, rebuilt: str) -> None:
        super()._swap_table(c, live, rebuilt)
        # The constraints (and their indexes) keep the names they were created with
        # (`active_messages__next_pkey`): give them the live table's names again.
        c.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = to_regclass(?)",
            (self._qualified(live),),
        )
        for row in c.fetchall():
            name = row["conname"]
            if REBUILD_SUFFIX in name:
                renamed = name.replace(REBUILD_SUFFIX, "", 1)
                c.execute(f'ALTER TABLE {live} RENAME CONSTRAINT "{name}" TO "{renamed}"')

    def _qualified(self, name: str) -> str:
        return f'"{self.datastore.schema}"."{name}"'

    # -- following the log -------------------------------------------------------------------

    def follow(self, stop: threading.Event, on_batch: Followed | None = None) -> int:
        """Keep the views up to date until `stop` is set, with the library's subscription
        (LISTEN/NOTIFY): each batch projects what has arrived, up to 1,000 events, in one
        transaction with its tracked position. Events another process projected first are
        skipped, so every event is projected exactly once whoever projects it."""
        done = 0
        while not stop.is_set() and (count := self._project_next_batch()):  # the backlog
            done += count
            if on_batch is not None:
                on_batch(count)
        with self._reading() as c:
            start = self._position(c, TRACKING_NAME)
        arrivals: queue.Queue[Notification | BaseException | None] = queue.Queue(
            maxsize=2 * BATCH_SIZE
        )
        with self.recorder.subscribe(gt=start) as subscription:
            forwarder = threading.Thread(
                target=_forward, args=(subscription, arrivals, stop), daemon=True
            )
            forwarder.start()
            try:
                while not stop.is_set():
                    batch = _next_batch(arrivals)
                    if batch:
                        count = self._project_arrived(batch)
                        done += count
                        if count and on_batch is not None:
                            on_batch(count)
            finally:
                subscription.stop()
        forwarder.join()
        return done

    def _project_arrived(self, batch: list[Notification]) -> int:
        error: PersistenceError | None = None
        for _ in backoff.attempts(max(1, self.datastore.lock_timeout)):
            try:
                with self._writing() as c:
                    position = self._position(c, TRACKING_NAME)
                    entries = [
                        self._entry(n.id, n.originator_id, n.originator_version, n.topic, n.state)
                        for n in batch
                        if n.id > position
                    ]
                    if entries:
                        self._project_entries(c, LIVE, TRACKING_NAME, entries)
                return len(entries)
            except PersistenceError as failed:  # the lock, or a lost connection: again
                error = failed
        raise StorageError(f"cannot project the views: {error}")


def _forward(
    subscription: Any,
    arrivals: queue.Queue[Notification | BaseException | None],
    stop: threading.Event,
) -> None:
    """Move the subscription's notifications to `arrivals`; then None, or the error."""
    last: BaseException | None = None
    try:
        for notification in subscription:
            while not stop.is_set():
                try:
                    arrivals.put(notification, timeout=ARRIVALS_WAIT)
                    break
                except queue.Full:
                    continue
            if stop.is_set():
                return
    except BaseException as error:
        last = error
    while not stop.is_set():
        try:
            arrivals.put(last, timeout=ARRIVALS_WAIT)
            return
        except queue.Full:
            continue


def _next_batch(arrivals: queue.Queue[Notification | BaseException | None]) -> list[Notification]:
    """What has arrived, up to a batch (waiting a little for the first one)."""
    try:
        first = arrivals.get(timeout=ARRIVALS_WAIT)
    except queue.Empty:
        return []
    batch: list[Notification] = []
    item: Notification | BaseException | None = first
    while True:
        if item is None:
            raise StorageError("the subscription to the log ended")
        if isinstance(item, BaseException):
            raise StorageError(f"the subscription to the log failed: {item}") from item
        batch.append(item)
        if len(batch) >= BATCH_SIZE:
            return batch
        try:
            item = arrivals.get_nowait()
        except queue.Empty:
            return batch
