"""The eventsourcing library's internals this store relies on, all of them here.

Everything else uses the library's public API. These are its non-public methods, relied on
for what the public API does not offer: recording the views' tracked position inside the
transaction that writes their rows, recorder methods without the library's fixed-wait retry
(the store retries itself, with backoff, up to its lock timeout), and connections that keep
prepared statements (and a chosen `synchronous`). They
were checked against eventsourcing 9.5.6, and the version range in pyproject.toml
(`>=9.5.6,<9.6`) admits only releases of that line: a newer line is taken after these have
been checked against it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from eventsourcing.persistence import InterfaceError, Tracking, TrackingRecorder
from eventsourcing.sqlite import (
    SQLITE3_DEFAULT_LOCK_TIMEOUT,
    SQLiteConnection,
    SQLiteConnectionPool,
)

F = TypeVar("F", bound=Callable[..., Any])


def without_retry(method: F) -> F:
    """A recorder method without the library's retry decorator."""
    return method.__wrapped__  # type: ignore[attr-defined, no-any-return]


def tracked_position(tracker: TrackingRecorder, cursor: Any, name: str) -> int:
    """The position `name` tracks, read in the cursor's transaction (0 if none)."""
    return tracker._max_tracking_id(name, cursor) or 0  # type: ignore[attr-defined]


def track(tracker: TrackingRecorder, cursor: Any, name: str, position: int) -> None:
    """Record that `name` reflects the log up to `position`, in the cursor's transaction;
    the library's IntegrityError if it reflects that position already."""
    tracker._insert_tracking(cursor, Tracking(name, position))  # type: ignore[attr-defined]


class CachingSQLiteConnectionPool(SQLiteConnectionPool):
    """The library's SQLite pool, whose connections keep `statements` prepared statements
    (the library keeps one), commit at `synchronous`, delete with `secure_delete` on, and
    cache up to `cache_kib` of pages (`small_cache_kib` in a thread reading `lightly`)."""

    statements = 256
    # KiB of page cache per connection (SQLite's default is 2,000): a compaction of 10,000
    # messages updates ~5 MB of history rows, which a small cache reads again and again.
    cache_kib = 16384
    small_cache_kib = 256  # for a long read that visits each page about once (verify's)

    def __init__(
        self,
        *,
        synchronous: str = "FULL",
        prepare: Callable[[sqlite3.Connection], None] | None = None,
        **options: Any,
    ) -> None:
        self.synchronous = synchronous  # of the log's writes; the views' commit at NORMAL
        self.prepare = prepare  # SQL functions the views need, given to each connection
        self._light = threading.local()  # whether this thread reads `lightly`
        super().__init__(**options)

    @contextmanager
    def lightly(self) -> Iterator[None]:
        """While the block runs, each connection this thread takes caches at most
        `small_cache_kib` of pages (its cache is shrunk, and grown again when it is put
        back): a long read then holds little memory, whatever its length."""
        outer = getattr(self._light, "on", False)
        self._light.on = True
        try:
            yield
        finally:
            self._light.on = outer

    def get_connection(
        self, timeout: float | None = None, *, is_writer: bool | None = None
    ) -> SQLiteConnection:
        connection = super().get_connection(timeout, is_writer=is_writer)
        if getattr(self._light, "on", False):
            _cache(connection, self.small_cache_kib)
        return connection

    def put_connection(self, conn: SQLiteConnection) -> None:
        if getattr(self._light, "on", False):
            _cache(conn, self.cache_kib)
        super().put_connection(conn)

    def _create_connection(self) -> SQLiteConnection:
        try:
            connection = sqlite3.connect(
                database=self.db_name,
                uri=True,
                check_same_thread=False,
                isolation_level=None,  # the library issues BEGIN itself
                cached_statements=self.statements,
                timeout=self.lock_timeout or SQLITE3_DEFAULT_LOCK_TIMEOUT,
            )
        except (sqlite3.Error, TypeError) as error:
            raise InterfaceError(error) from error
        connection.row_factory = sqlite3.Row
        connection.execute("PRAGMA secure_delete = ON")
        connection.execute(f"PRAGMA cache_size = -{self.cache_kib}")
        connection.execute(f"PRAGMA synchronous = {self.synchronous}")
        if self.prepare is not None:
            self.prepare(connection)
        return SQLiteConnection(sqlite_conn=connection, max_age=self.max_age)


def tuple_cursor(connection: SQLiteConnection) -> sqlite3.Cursor:
    """A new plain sqlite3 cursor of the connection, its rows tuples (no wrapper around it:
    the hot reads')."""
    cursor = connection._sqlite_conn.cursor()  # type: ignore[attr-defined]
    cursor.row_factory = None
    return cursor


def _cache(connection: SQLiteConnection, kib: int) -> None:
    """Set the connection's page cache (a smaller one frees the pages beyond it)."""
    connection._sqlite_conn.execute(f"PRAGMA cache_size = -{kib}")  # type: ignore[attr-defined]
