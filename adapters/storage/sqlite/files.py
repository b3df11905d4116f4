"""The store's SQLite file on disk: created private to the user, in WAL mode, never a
database of another program.

`prepare` runs before the library connects, so that processes opening a new store at once
all succeed; `check_store` only reads (a migration's source).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from contextlib import closing
from pathlib import Path

from ....application import retry
from ....domain.errors import NotAStoreError, StorageError, StoreNotFoundError

LOCK_SUFFIX = "-lock"
EVENTS_TABLE = "stored_events"  # the event log: a SQLite file without it is not a store
_BUSY = frozenset({5, 6, 15})  # SQLITE_BUSY, _LOCKED, _PROTOCOL: another connection is busy


def prepare(path: Path, lock_timeout: float) -> None:
    """Refuse a database of another program; create the file and its writers' lock file
    (0600, their directory 0700) and put the database in WAL mode."""
    _refuse_foreign_database(path)
    _create_private(path)
    _use_wal(path, lock_timeout)
    _create_private(lock_file(path))


def lock_file(database: Path) -> Path:
    """The file whose locks order the store's writers (see `transactions`)."""
    return database.with_name(database.name + LOCK_SUFFIX)


def check_store(path: Path, url: str) -> None:
    """Raise NotAStoreError unless `path` (of the store `url`) is a store file, reading only:
    StoreNotFoundError if there is no file, or an empty database."""
    if path.is_dir():
        raise NotAStoreError(f"{path} is not a transcript store: it is a directory")
    if not path.is_file():
        raise StoreNotFoundError(url, f"{path} does not exist")
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            tables = _tables(db)
    except sqlite3.Error as error:
        raise NotAStoreError(f"{path} is not a transcript store: {error}") from None
    if tables and EVENTS_TABLE not in tables:
        raise _foreign(path, tables)
    if not tables:
        raise StoreNotFoundError(url, f"{path} is an empty database")


def _refuse_foreign_database(path: Path) -> None:
    """Raise StorageError if `path` is a SQLite database of another program.

    Opening one as a store would add the store's tables to it and switch it to WAL mode. The
    check only reads the schema: `immutable=1` unless a `-wal` file is beside it, so no
    `-wal`/`-shm` files are left behind either.
    """
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return
    except OSError:
        return  # creating the store reports what is wrong with the path
    immutable = "" if Path(f"{path}-wal").exists() else "&immutable=1"
    try:
        uri = f"{path.resolve().as_uri()}?mode=ro{immutable}"
        with closing(sqlite3.connect(uri, uri=True)) as connection:
            tables = _tables(connection)
    except sqlite3.Error:
        return  # not SQLite at all, or locked: opening it says so
    if tables and EVENTS_TABLE not in tables:
        raise _foreign(path, tables)


def _tables(connection: sqlite3.Connection) -> set[str]:
    rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {name for (name,) in rows}


def _foreign(path: Path, tables: set[str]) -> NotAStoreError:
    return NotAStoreError(
        f"{path} is not a transcript store: it is a SQLite database of another program "
        f"(tables {', '.join(sorted(tables)[:3])}, …)"
    )


def _create_private(path: Path) -> None:
    """Create the file (0600) and its directory (0700), whatever the umask; an existing file
    keeps its mode but must be writable."""
    try:
        if not path.parent.is_dir():
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            path.parent.chmod(0o700)  # mkdir's mode is masked by the umask
        try:
            descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            _check_writable(path)
            return
        os.fchmod(descriptor, 0o600)  # SQLite gives -wal and -shm the mode of the file
        os.close(descriptor)
    except OSError as error:
        raise StorageError(f"cannot create {error.filename or path}: {error.strerror}") from None


def _check_writable(path: Path) -> None:
    """Never by opening the file: closing a descriptor of a database file drops every POSIX
    lock this process holds on it, SQLite's included (a corrupted file)."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not os.access(path, os.W_OK):
        raise StorageError(f"cannot write {path}: Permission denied (a store must be writable)")


def _use_wal(path: Path, timeout: float) -> None:
    error: sqlite3.Error | None = None
    for _ in retry.attempts(timeout):
        try:
            with sqlite3.connect(path, timeout=timeout) as connection:
                if connection.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as failed:
            code = failed.sqlite_errorcode
            if code is not None and code & 0xFF not in _BUSY:  # read-only, I/O error: no retry
                raise StorageError(f"cannot open {path}: {failed}") from None
            error = failed  # another process is switching it right now
        except sqlite3.DatabaseError as not_sqlite:
            raise NotAStoreError(f"{path} is not a transcript store: {not_sqlite}") from None
    raise StorageError(f"cannot open {path}: {error}")
