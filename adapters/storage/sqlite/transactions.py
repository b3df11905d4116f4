"""Write transactions on a SQLite store, taken in turn by its writers in every process.

SQLite lets a connection that waits for the write lock sleep and try again, up to 100 ms
apart; a writer in a tight loop releases and takes the lock again far sooner, so every other
writer waits out the whole lock timeout. So each write transaction of a store file — the
log's (appends, compactions, erasures) and the views' (projection, rebuilds) — first takes
its turn (`WriterTurns`): two byte ranges of the file `<store>-lock`, a gate and the turn,
locked with open-file-description locks (per open file, so threads queue like processes).
A writer holds the gate while it waits for the turn, so the writer that just had the turn
queues behind the one waiting: no writer has the lock twice while another waits. Then the
transaction takes SQLite's lock (`BEGIN IMMEDIATE`), which is free but for programs that do
not take turns, waited for up to the lock timeout.

Without open-file-description locks (not Linux) writers do not take turns: SQLite's lock
alone orders them.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import struct
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from uuid import UUID

from eventsourcing.persistence import (
    DatabaseError,
    IntegrityError,
    OperationalError,
    PersistenceError,
    StoredEvent,
)
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor

from ....domain.id_index import IndexChanges, IndexEntry, IndexState
from ..sql.log_index import LogIndex, state_in
from .files import lock_file

GATE, TURN = 0, 1  # byte offsets in the lock file
FIRST_POLL, MAX_POLL = 0.0001, 0.002  # seconds between tries of a lock another writer holds
_OFD_LOCKS = hasattr(fcntl, "F_OFD_SETLK")


@contextmanager
def library_errors() -> Iterator[None]:
    """sqlite3's errors as the library's (which the backend classifies)."""
    try:
        yield
    except sqlite3.IntegrityError as error:
        raise IntegrityError(error) from error
    except sqlite3.OperationalError as error:
        raise OperationalError(error) from error
    except sqlite3.DatabaseError as error:
        raise DatabaseError(error) from error
    except sqlite3.Error as error:
        raise PersistenceError(error) from error


class WriterTurns:
    """The turns of one store file's writers (one per file in a process: `turns_of`)."""

    def __init__(self, database: Path) -> None:
        self.path = lock_file(database)
        self._local = threading.local()  # one open file per thread: threads queue too

    @contextmanager
    def turn(self, timeout: float) -> Iterator[None]:
        """Wait for this writer's turn (up to `timeout` seconds), hold it while the block runs.

        Uncontended, the gate and the turn are taken in one request (a lock of both bytes,
        granted only if neither is held), the same state as taking one then the other."""
        descriptor = self._file()
        if not _request(descriptor, _BOTH):
            deadline = time.monotonic() + timeout
            _take(descriptor, _GATE, deadline)
            try:
                _take(descriptor, _TURN, deadline)
            except BaseException:
                _request(descriptor, _GATE_FREE)
                raise
        _request(descriptor, _GATE_FREE)
        try:
            yield
        finally:
            _request(descriptor, _TURN_FREE)

    def _file(self) -> int:
        opened: _LockFile | None = getattr(self._local, "file", None)
        if opened is None:
            opened = self._local.file = _LockFile(self.path)
        return opened.descriptor


class _LockFile:
    """The lock file, open for one thread; closed (its locks released) with the thread."""

    def __init__(self, path: Path) -> None:
        try:
            self.descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:  # classified as lasting: waiting does not cure it
            raise OperationalError(f"cannot open {path}: {error.strerror}") from error

    def __del__(self) -> None:
        if hasattr(self, "descriptor"):
            os.close(self.descriptor)


def _flock(kind: int, offset: int, length: int = 1) -> bytes:
    """An open-file-description lock request (`struct flock`) for bytes of the lock file."""
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, offset, length, 0)


if _OFD_LOCKS:
    _GATE, _TURN = _flock(fcntl.F_WRLCK, GATE), _flock(fcntl.F_WRLCK, TURN)
    _BOTH = _flock(fcntl.F_WRLCK, GATE, 2)
    _GATE_FREE, _TURN_FREE = _flock(fcntl.F_UNLCK, GATE), _flock(fcntl.F_UNLCK, TURN)


def _request(descriptor: int, request: bytes) -> bool:
    """Make a lock request on the file, without waiting; whether it was granted."""
    try:
        fcntl.fcntl(descriptor, fcntl.F_OFD_SETLK, request)
    except (BlockingIOError, PermissionError):
        return False
    return True


def _take(descriptor: int, request: bytes, deadline: float) -> None:
    delay = FIRST_POLL
    while not _request(descriptor, request):
        if time.monotonic() >= deadline:
            raise OperationalError("database is locked: other writers kept their turn")
        time.sleep(delay)
        delay = min(MAX_POLL, delay * 2)


class SQLiteLogTransaction:
    """A write transaction on a SQLite store's log (see `LogTransaction`)."""

    def __init__(
        self, recorder: SQLiteApplicationRecorder, cursor: SQLiteCursor, index: LogIndex
    ) -> None:
        self.recorder = recorder
        self.cursor = cursor
        self.log_index = index
        table = recorder.events_table_name
        self._select = (
            f"SELECT originator_version, topic, state FROM {table} "
            "WHERE originator_id = ? AND originator_version > ? ORDER BY originator_version"
        )
        self._first = (
            f"SELECT originator_version, topic, state FROM {table} "
            "WHERE originator_id = ? ORDER BY originator_version LIMIT 1"
        )
        self._event = (
            f"SELECT topic, state FROM {table} WHERE originator_id = ? AND originator_version = ?"
        )
        self._delete = f"DELETE FROM {table} WHERE originator_id = ? AND originator_version < ?"
        self._head = f"SELECT MAX(originator_version) FROM {table} WHERE originator_id = ?"
        self._known_head: tuple[UUID, int] | None = None  # read with the index state

    def read_ahead(self, stream_id: UUID, *, after: int | None) -> None:
        """Nothing: a read costs no round trip here."""

    def events(self, stream_id: UUID, *, after: int) -> list[StoredEvent]:
        if self._known_head is not None and self._known_head[0] == stream_id:
            if self._known_head[1] <= after:  # a write's fast-forward, usually: none
                return []
        self.cursor.execute(self._select, (stream_id.hex, after))
        return [StoredEvent(stream_id, row[0], row[1], row[2]) for row in self.cursor.fetchall()]

    def first_event(self, stream_id: UUID) -> StoredEvent | None:
        self.cursor.execute(self._first, (stream_id.hex,))
        row = self.cursor.fetchone()
        return None if row is None else StoredEvent(stream_id, row[0], row[1], row[2])

    def event(self, stream_id: UUID, version: int) -> StoredEvent | None:
        self.cursor.execute(self._event, (stream_id.hex, version))
        row = self.cursor.fetchone()
        return None if row is None else StoredEvent(stream_id, version, row[0], row[1])

    def index_state(self, stream_id: UUID) -> IndexState:
        """Read with the stream's last version, in one statement: `events` after it are
        then known to be none until this transaction writes."""
        statement, params = self.log_index.state_statement(stream_id)
        self.cursor.execute(
            f"SELECT s.*, ({self._head}) AS head FROM ({statement}) AS s",
            (stream_id.hex, *params),
        )
        row = self.cursor.fetchone()
        self._known_head = (stream_id, row["head"] or 0)
        return state_in(row)

    def indexed(self, stream_id: UUID, message_ids: Sequence[str]) -> dict[str, IndexEntry]:
        return self.log_index.entries(self.cursor, stream_id, message_ids)

    def write_index(self, stream_id: UUID, changes: IndexChanges) -> None:
        self.log_index.write(self.cursor, stream_id, changes)

    def insert(self, events: Sequence[StoredEvent]) -> None:
        self._known_head = None
        self.cursor.executemany(
            self.recorder.insert_events_statement,
            [(e.originator_id.hex, e.originator_version, e.topic, e.state) for e in events],
        )

    def delete_before(self, stream_id: UUID, version: int) -> None:
        self._known_head = None
        self.cursor.execute(self._delete, (stream_id.hex, version))


def writers_turn(database: str, timeout: float) -> AbstractContextManager[None]:
    """Hold a writer's turn of the store file `database` while the block runs (an in-memory
    store, whose writers are threads of one process, and a system without the locks turns
    need, take none)."""
    if not _OFD_LOCKS or "mode=memory" in database:
        return nullcontext()
    turns = _registry.get(database)
    if turns is None:
        with _registry_lock:
            turns = _registry.setdefault(database, WriterTurns(Path(database).resolve()))
    return turns.turn(timeout)


@contextmanager
def log_transaction(
    recorder: SQLiteApplicationRecorder, index: LogIndex
) -> Iterator[SQLiteLogTransaction]:
    """A write transaction on the log, in its writer's turn, holding SQLite's write lock."""
    datastore = recorder.datastore
    pool = datastore.pool
    with writers_turn(pool.db_name, pool.lock_timeout or 5), library_errors():
        with datastore.get_connection(commit=True) as connection:
            cursor = connection.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            try:
                yield SQLiteLogTransaction(recorder, cursor, index)
            except BaseException:
                _roll_back(connection)
                raise
            connection.commit()


def _roll_back(connection: object) -> None:
    try:
        connection.rollback()  # type: ignore[attr-defined]
    except sqlite3.Error:
        pass  # the connection failed: SQLite rolls back what it did not commit


_registry: dict[str, WriterTurns] = {}  # by database file name
_registry_lock = threading.Lock()
