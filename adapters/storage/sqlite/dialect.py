"""The views' SQL on SQLite: plain tables in the same file as the events.

A view transaction takes the file's write lock first (`BEGIN IMMEDIATE`) and commits at
`synchronous=NORMAL`: the views are derived data, and a power cut can only roll back their
tail together with its tracked position, which the next catch-up projects again. The log
position is the events table's `rowid`; tracked positions are in the library's `tracking`
table. SQLite cannot notify: the views' follower polls.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import datetime
from typing import Any

import orjson
from eventsourcing.persistence import IntegrityError
from eventsourcing.sqlite import SQLiteCursor, SQLiteDatastore, SQLiteTrackingRecorder

from .. import internals
from ..codec import iso_time
from ..sql.dialect import Dialect, Mark
from ..sql.schema import ColumnTypes
from .transactions import SQLiteLogTransaction, library_errors, writers_turn

TRACKING_TABLE = "tracking"  # the library's SQLiteTrackingRecorder's, named in its SQL

SQLITE_COLUMNS = ColumnTypes(
    text="TEXT",
    long_text="TEXT",
    integer="INTEGER",
    boolean="INTEGER",
    json="TEXT",
    time="TEXT",
    # its UTF-8 bytes: orjson reads them as they are, where a str of megabytes is decoded
    # by sqlite3, then encoded again by orjson (a 10,000-message context: +20 %)
    json_text_array="CAST('[' || group_concat({texts}, ',') || ']' AS BLOB)",
)


class SQLiteDialect(Dialect):
    columns = SQLITE_COLUMNS
    position = "rowid"
    ciphertext_as_text = False  # a TEXT column keeps a BLOB as it is

    def __init__(self, datastore: SQLiteDatastore, events_table: str) -> None:
        super().__init__(events_table)
        self.datastore = datastore
        self.tracker = SQLiteTrackingRecorder(datastore)  # the views' marks: the library's
        tracked = (
            f"COALESCE((SELECT MAX(notification_id) FROM {TRACKING_TABLE} "
            "WHERE application_name = ?), 0)"
        )
        self.after_tracked = f"{self.position} > {tracked}"
        head = f"COALESCE((SELECT MAX({self.position}) FROM {events_table}), 0)"
        self.reflects_log = f"{head} <= {tracked}"

    def tracked_mark(self, c: SQLiteCursor, name: str) -> Mark:
        return None, internals.tracked_position(self.tracker, c, name)

    def track(self, c: SQLiteCursor, name: str, mark: Mark) -> None:
        internals.track(self.tracker, c, name, mark[1])

    def forget(self, c: SQLiteCursor, names: Sequence[str]) -> None:
        c.execute(
            f"DELETE FROM {TRACKING_TABLE} WHERE application_name IN "
            f"({', '.join('?' for _ in names)})",
            tuple(names),
        )

    @contextmanager
    def reading(self, *, snapshot: bool = True) -> Iterator[SQLiteCursor]:
        if snapshot:
            with self.datastore.transaction(commit=False) as cursor:
                yield cursor
            return
        with self.datastore.get_connection(commit=False) as connection:
            cursor = connection.cursor()
            try:
                with library_errors():
                    yield cursor
            finally:
                cursor.sqlite_cursor.close()

    @contextmanager
    def writing(self, *, rebuilding: bool = False) -> Iterator[SQLiteCursor]:
        """A view transaction: it takes the lock first (BEGIN IMMEDIATE) and commits without
        waiting for the disk (`synchronous=NORMAL`): views are derived from the log.

        A rebuild's transactions also checkpoint less often. They zero the pages they free,
        as every connection does (`secure_delete`): the dropped tables' messages are in the
        log only until an erasure deletes them there.
        """
        pool = self.datastore.pool
        settings = {"synchronous": ("NORMAL", getattr(pool, "synchronous", "FULL"))}
        if rebuilding:
            settings |= {"wal_autocheckpoint": ("10000", "1000")}
        with writers_turn(pool.db_name, pool.lock_timeout or 5), library_errors():
            with self.datastore.get_connection(commit=True) as connection:
                cursor = connection.cursor()
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

    def log_cursor(self, transaction: object) -> SQLiteCursor:
        """The log transaction's own cursor: it holds the file's write lock, the views'."""
        assert isinstance(transaction, SQLiteLogTransaction)
        return transaction.cursor

    def cursor_in(self, transaction: object) -> SQLiteCursor:
        return self.log_cursor(transaction)

    def create_tables(self, statements: Sequence[str]) -> None:
        try:
            self.tracker.create_table()
        except IntegrityError:  # another process created the tracking table at the same time
            self.tracker.create_table()
        with self.datastore.transaction(commit=True) as c:
            for statement in statements:
                c.execute(statement)

    def relation_kind(self, c: SQLiteCursor, name: str) -> str | None:
        c.execute(
            "SELECT type FROM sqlite_master WHERE name = ? AND type IN ('table', 'view')", (name,)
        )
        row = c.fetchone()
        return None if row is None else str(row["type"])

    def user_indexes(self, c: SQLiteCursor, tables: Sequence[str]) -> list[str]:
        c.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            f"AND tbl_name IN ({','.join('?' * len(tables))})",
            tuple(tables),
        )
        return [row["sql"] for row in c.fetchall()]

    def tuples(
        self, c: SQLiteCursor, statement: str, params: Sequence[Any]
    ) -> list[tuple[Any, ...]]:
        cursor = c.sqlite_cursor
        factory, cursor.row_factory = cursor.row_factory, None
        try:
            return cursor.execute(statement, params).fetchall()
        finally:
            cursor.row_factory = factory

    def read_tuples(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Straight from the pool, on a plain sqlite3 cursor of its own, with no `reading()`
        around it: the turn cycle's read, where each wrapper costs a few percent."""
        pool = self.datastore.pool
        connection = pool.get_connection(is_writer=False)
        try:
            with closing(internals.tuple_cursor(connection)) as cursor, library_errors():
                return cursor.execute(statement, params).fetchall()
        finally:
            pool.put_connection(connection)

    load_json = staticmethod(orjson.loads)

    def load_time(self, value: Any) -> datetime:
        return datetime.fromisoformat(value)

    def time_param(self, value: datetime) -> Any:
        return iso_time(value)

    def bool_param(self, value: bool) -> Any:
        return int(value)
