"""The read models on SQLite: plain tables in the same file as the events.

The logic is the dialect-neutral `SQLTranscriptViews`; this module gives it SQLite's
transactions and catalog. A view transaction takes the file's write lock first
(`BEGIN IMMEDIATE`) and commits at `synchronous=NORMAL`: the views are derived data, and a
power cut can only roll back their tail together with its tracked position, which the next
catch-up projects again. The log position is the events table's `rowid`. SQLite cannot
notify: `follow` polls. Full-text search is an FTS5 index of `message_history`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from uuid import UUID

import orjson
from eventsourcing.persistence import IntegrityError, Mapper, OperationalError, PersistenceError
from eventsourcing.sqlite import SQLiteCursor, SQLiteDatastore, SQLiteTrackingRecorder

from ....domain.messages import Message
from ....projections.projector import Projector
from ..sql.schema import LIVE, NEXT, ColumnTypes, Tables
from ..sql.views import TRACKING_NAME, SQLTranscriptViews
from . import search

_ACTIVE_SQL = "SELECT message FROM active_messages WHERE session_id = ? ORDER BY position"
_EXISTS_SQL = "SELECT 1 FROM sessions WHERE session_id = ?"

SQLITE_COLUMNS = ColumnTypes(
    text="TEXT",
    long_text="TEXT",
    integer="INTEGER",
    boolean="INTEGER",
    json="TEXT",
    time="TEXT",
)


class SQLiteTranscriptViews(SQLTranscriptViews, SQLiteTrackingRecorder):
    """The views of one SQLite store (file or memory), sharing the events' datastore."""

    COLUMNS = SQLITE_COLUMNS
    POSITION = "rowid"
    CIPHERTEXT_AS_TEXT = False  # a TEXT column keeps a BLOB as it is
    SEARCH = staticmethod(search.search)

    def __init__(
        self,
        datastore: SQLiteDatastore,
        *,
        mapper: Mapper[UUID],
        projector: type[Projector] = Projector,
        events_table: str = "stored_events",
    ) -> None:
        self.mapper = mapper
        self.projector = projector
        self.events_table = events_table
        self.tracking_table = "tracking"
        self._fresh_sql = (  # no events yet (NULL) counts as fresh
            f"SELECT COALESCE((SELECT MAX(rowid) FROM {events_table}) <= COALESCE("
            "(SELECT MAX(notification_id) FROM tracking WHERE application_name = ?), 0), 1)"
        )
        super().__init__(datastore)

    def construct_create_table_statements(self) -> list[str]:
        return [*super().construct_create_table_statements(), *self.view_create_statements()]

    def create_table(self) -> None:
        try:
            super().create_table()
        except IntegrityError:  # another process created the tracking table at the same time
            super().create_table()

    # -- dialect hooks ---------------------------------------------------------------------

    _load_json = staticmethod(orjson.loads)
    _load_time = staticmethod(datetime.fromisoformat)
    _time_param = staticmethod(datetime.isoformat)
    _bool_param = staticmethod(int)

    @contextmanager
    def _reading(self) -> Iterator[SQLiteCursor]:
        with self.datastore.transaction(commit=False) as cursor:
            yield cursor

    @contextmanager
    def _writing(self, *, rebuilding: bool = False) -> Iterator[SQLiteCursor]:
        """A view transaction: it takes the lock first (BEGIN IMMEDIATE) and commits without
        waiting for the disk (`synchronous=NORMAL`): views are derived from the log.

        A rebuild's transactions also checkpoint less often, and do not zero the pages they
        free (Debian builds SQLite with SECURE_DELETE): every dropped row is in the log.
        """
        settings = {"synchronous": ("NORMAL", "FULL")}
        if rebuilding:
            settings |= {"secure_delete": ("FAST", "1"), "wal_autocheckpoint": ("10000", "1000")}
        with self.datastore.get_connection(commit=True) as connection:
            cursor = connection.cursor()
            try:
                for name, (during, _) in settings.items():
                    cursor.execute(f"PRAGMA {name} = {during}")
                try:
                    cursor.execute("BEGIN IMMEDIATE")
                    try:
                        yield cursor
                    except BaseException:
                        connection.rollback()
                        raise
                    connection.commit()
                finally:
                    for name, (_, after) in settings.items():
                        cursor.execute(f"PRAGMA {name} = {after}")
            except sqlite3.OperationalError as error:
                raise OperationalError(error) from error

    def active(self, session_id: str) -> list[Message] | None:
        """The hot read, lean: autocommit statements on a pooled reader, rows as tuples.

        One statement checks the views reflect the whole log; the views only move forward
        (a rebuild swaps whole tables in), so what is read next reflects every write that
        returned before the call. Behind: catch up, then read again.
        """
        pool = self.datastore.pool
        load = self._json_content if self.content.encrypted else orjson.loads
        while True:
            connection = pool.get_connection(is_writer=False)
            try:
                cursor = connection.cursor().sqlite_cursor
                cursor.row_factory = None
                try:
                    cursor.execute(self._fresh_sql, (TRACKING_NAME,))
                    if cursor.fetchone()[0]:
                        cursor.execute(_ACTIVE_SQL, (session_id,))
                        messages = [load(text) for (text,) in cursor]
                        if not messages:
                            cursor.execute(_EXISTS_SQL, (session_id,))
                            if cursor.fetchone() is None:
                                return None
                        return messages
                except sqlite3.Error as error:
                    raise PersistenceError(error) from error
                finally:
                    cursor.close()
            finally:
                pool.put_connection(connection)
            self.catch_up()

    def _derived_statements(self, tables: Tables) -> list[str]:
        if self.content.encrypted:  # an index of ciphertext finds nothing
            return []
        return [
            *search.index_statements(tables.message_history),
            *search.trigger_statements(tables.message_history),
        ]

    def _derived_tables(self, tables: Tables) -> list[str]:
        return [] if self.content.encrypted else [search.search_table(tables.message_history)]

    def _before_swap(self, c: SQLiteCursor) -> None:
        for statement in search.drop_trigger_statements(NEXT.message_history):
            c.execute(statement)

    def _after_swap(self, c: SQLiteCursor) -> None:
        if not self.content.encrypted:
            for statement in search.trigger_statements(LIVE.message_history):
                c.execute(statement)

    def _table_exists(self, c: SQLiteCursor, name: str) -> bool:
        c.execute("SELECT 1 AS found FROM sqlite_master WHERE name = ?", (name,))
        return c.fetchone() is not None

    def _user_indexes(self, c: SQLiteCursor, tables: Sequence[str]) -> list[str]:
        c.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            f"AND tbl_name IN ({','.join('?' * len(tables))})",
            tuple(tables),
        )
        return [row["sql"] for row in c.fetchall()]
