"""Write transactions on a PostgreSQL store's log.

A write of one stream (a command on a session) takes that stream's lock first, a
transaction-level advisory lock keyed by the stream (`stream_lock_key`), waiting up to the
lock timeout: writers of one session take turns (PostgreSQL grants a lock in the order it
was asked for), writers of different sessions do not wait for each other (two streams whose
keys collide only take turns). Log positions then commit out of order; the views read the
log in an order that allows it (see `dialect`). A write of the whole log (a copy of another
store's events, the index's keys dropped) takes the library's table lock instead (`LOCK
TABLE … IN EXCLUSIVE MODE`, which every insert of the library takes too), which excludes
every other writer. Inserts are the library's statement; live followers are notified
(NOTIFY) once the write committed (`_notify`). The whole transaction runs in psycopg's
pipeline mode: statements go out when a result is waited for, so BEGIN, the locks and the
reads sent ahead (`read_ahead`) share one round trip, the insert and the index's writes go
with the next read, and the COMMIT (and the NOTIFY) with the last statements. An error is
raised where a result is next waited for. With the store's durability "normal" a write
commits with `synchronous_commit = off`: the last writes can be lost if the server crashes,
never half-applied.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg.errors import InFailedSqlTransaction
from psycopg.pq import TransactionStatus
from psycopg.sql import SQL, Identifier, Literal

from ....domain.id_index import IndexChanges, IndexEntry, IndexState
from ..sql.log_index import LogIndex
from .advisory import stream_lock_key
from .read_ahead import Query, ReadAhead

# The library setting of the log's writes: "on" (the store's durability "full") or "off".
SYNCHRONOUS_COMMIT = "POSTGRES_SYNCHRONOUS_COMMIT"


class PostgresLogTransaction:
    """A write transaction on a PostgreSQL store's log (see `LogTransaction`)."""

    def __init__(self, recorder: PostgresApplicationRecorder, cursor: Any, index: LogIndex) -> None:
        self.recorder = recorder
        self.cursor = cursor
        self.log_index = index
        self.ahead = ReadAhead(cursor.connection)
        table = SQL("{}.{}").format(
            Identifier(recorder.datastore.schema), Identifier(recorder.events_table_name)
        )
        self._select = SQL(
            "SELECT originator_version, topic, state FROM {} "
            "WHERE originator_id = %s AND originator_version > %s ORDER BY originator_version"
        ).format(table)
        self._first = SQL(
            "SELECT originator_version, topic, state FROM {} "
            "WHERE originator_id = %s ORDER BY originator_version LIMIT 1"
        ).format(table)
        self._event = SQL(
            "SELECT topic, state FROM {} WHERE originator_id = %s AND originator_version = %s"
        ).format(table)
        self._delete = SQL(
            "DELETE FROM {} WHERE originator_id = %s AND originator_version < %s"
        ).format(table)
        self.notify = SQL(
            "SELECT set_config('synchronous_commit', 'off', true), pg_notify({}, '')"
        ).format(Literal(recorder.channel_name))
        self.inserted = False  # events were inserted: followers are notified after the commit
        self.committed = False

    def read_ahead(self, stream_id: UUID, *, after: int | None) -> None:
        self.ahead.send(*self.log_index.state_statement(stream_id))
        if after is not None:
            self.ahead.send(self._select, (stream_id, after))

    def events(self, stream_id: UUID, *, after: int) -> list[StoredEvent]:
        return [
            StoredEvent(stream_id, row["originator_version"], row["topic"], row["state"])
            for row in self._read(self._select, (stream_id, after)).fetchall()
        ]

    def first_event(self, stream_id: UUID) -> StoredEvent | None:
        self.cursor.execute(self._first, (stream_id,), prepare=True)
        row = self.cursor.fetchone()
        if row is None:
            return None
        return StoredEvent(stream_id, row["originator_version"], row["topic"], row["state"])

    def event(self, stream_id: UUID, version: int) -> StoredEvent | None:
        self.cursor.execute(self._event, (stream_id, version))
        row = self.cursor.fetchone()
        return None if row is None else StoredEvent(stream_id, version, row["topic"], row["state"])

    def index_state(self, stream_id: UUID) -> IndexState:
        return self.log_index.state_of(self._read(*self.log_index.state_statement(stream_id)))

    def indexed(self, stream_id: UUID, message_ids: Sequence[str]) -> dict[str, IndexEntry]:
        return self.log_index.entries(self.cursor, stream_id, message_ids)

    def write_index(self, stream_id: UUID, changes: IndexChanges) -> None:
        self.log_index.write(self.cursor, stream_id, changes)

    def insert(self, events: Sequence[StoredEvent]) -> None:
        recorder = self.recorder
        rows = [
            recorder.construct_pg_stored_event(
                event.originator_id, event.originator_version, event.topic, event.state
            )
            for event in events
        ]
        self.cursor.execute(recorder.insert_events_statement, (rows,), prepare=True)
        self.inserted = True

    def delete_before(self, stream_id: UUID, version: int) -> None:
        self.cursor.execute(self._delete, (stream_id, version))

    def _read(self, query: Query, params: tuple[Any, ...]) -> Any:
        """A cursor holding the read's result: the one it was sent ahead on, if it was."""
        cursor = self.ahead.take(query, params)
        if cursor is None:
            cursor = self.cursor
            cursor.execute(query, params, prepare=True)
        return cursor


# The lock timeout (the function in FROM runs before the row's lock), then the stream's lock.
STREAM_LOCK = "SELECT pg_advisory_xact_lock(%s) FROM set_config('lock_timeout', %s, true)"


def lock_statements(
    recorder: PostgresApplicationRecorder, stream: UUID | None
) -> list[tuple[Any, tuple[Any, ...] | None]]:
    """The stream's lock (after the lock timeout) and the table's in ROW EXCLUSIVE mode (as
    every INSERT takes it, but before the transaction has an id: the views' readers rely on
    it, see `log_order.readable_below`), or the table's in EXCLUSIVE mode (`stream` None)."""
    if stream is None:
        return [(statement, None) for statement in recorder.lock_table_statements]
    table = SQL("{}.{}").format(
        Identifier(recorder.datastore.schema), Identifier(recorder.events_table_name)
    )
    timeout = f"{recorder.datastore.lock_timeout}s"
    return [
        (STREAM_LOCK, (stream_lock_key(recorder.events_table_name, stream), timeout)),
        (SQL("LOCK TABLE {} IN ROW EXCLUSIVE MODE").format(table), None),
    ]


def _notify(connection: Any, notify: Any) -> None:
    """Wake the log's live followers, once the write committed, in a transaction of its
    own that commits without waiting for the disk (a wake-up, not data): PostgreSQL holds a
    lock of the whole server from a NOTIFY's commit to its end, which inside the write's
    transaction made every write wait for the others' commits to reach the disk. One
    statement, sent with the COMMIT, in the same round trip: after the COMMIT, before the
    pipeline's sync, it runs in an implicit transaction of its own, whose commit at the
    sync the statement's `set_config` made asynchronous."""
    connection.cursor().execute(notify, prepare=True)


@contextmanager
def log_transaction(
    recorder: PostgresApplicationRecorder,
    index: LogIndex,
    *,
    durable: bool = True,
    stream: UUID | None = None,
) -> Iterator[PostgresLogTransaction]:
    """A write transaction on the log, holding the lock of `stream` (None: the table's)
    from the start; `durable`: its commit waits for the disk (else `synchronous_commit =
    off`). In pipeline mode, its BEGIN and COMMIT sent as statements on the library's
    autocommit connection: psycopg's transaction block would wait for each."""
    with recorder.datastore.get_connection() as connection:
        cursor = connection.cursor()
        try:
            with connection.pipeline():
                # READ COMMITTED whatever the server's default: each statement sees what
                # committed before it (the views' projection relies on it: `dialect.own_turn`).
                cursor.execute("BEGIN ISOLATION LEVEL READ COMMITTED", prepare=True)
                if not durable:
                    cursor.execute("SET LOCAL synchronous_commit = off", prepare=True)
                for statement, params in lock_statements(recorder, stream):
                    cursor.execute(statement, params, prepare=True)
                tx = PostgresLogTransaction(recorder, cursor, index)
                yield tx
                cursor.execute("COMMIT", prepare=True)
                if tx.inserted:
                    _notify(connection, tx.notify)
        except BaseException:
            if connection.info.transaction_status != TransactionStatus.IDLE:
                with suppress(psycopg.Error):  # a broken connection: the pool drops it
                    connection.execute("ROLLBACK")
            raise
        if cursor.statusmessage != "COMMIT":  # PostgreSQL's answer to COMMIT after an error
            raise InFailedSqlTransaction(f"the log transaction ended in {cursor.statusmessage}")
        tx.committed = True
