"""Erasure on SQLite: the version fence, and scrubbing the bytes an erasure deleted.

- The version fence: a trigger refuses an event whose version is not above every stored
  version of its stream. The primary key alone refuses a version that is stored; once an
  erasure deleted versions 1..n, a writer holding a stale copy of the transcript would
  otherwise store version k < n after the tombstone. The fence turns that into a version
  conflict, which the writer retries against the erased transcript.
- The erasure's transaction (the log's, see `transactions`) inserts the tombstone, then
  deletes the earlier events. The log position is the events table's rowid (no
  AUTOINCREMENT): the tombstone, inserted first, holds the largest rowid, so a deleted rowid
  is never reused below a position the views tracked.
- Every connection deletes with `secure_delete` on (`factory`): a deleted row's bytes
  are zeroed in its page. `scrub` then merges the search index into one segment (its old
  segments, which still list the deleted words, are deleted and so zeroed) and checkpoints
  the write-ahead log into the file and truncates it, so no old page image survives there.
"""

from __future__ import annotations

import time
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.persistence import OperationalError
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore

from .search import SEARCH_TABLE

FENCE_TRIGGER = "{table}_version_fence"
CHECKPOINT_WAIT = 0.05  # seconds between checkpoint attempts while readers hold old frames


def fence_statement(events_table: str) -> str:
    """The trigger refusing an event whose version is not above its stream's stored ones."""
    return (
        f"CREATE TRIGGER IF NOT EXISTS {FENCE_TRIGGER.format(table=events_table)} "
        f"BEFORE INSERT ON {events_table} WHEN EXISTS (SELECT 1 FROM {events_table} "
        "WHERE originator_id = NEW.originator_id "
        "AND originator_version >= NEW.originator_version) "
        "BEGIN SELECT RAISE(ABORT, 'UNIQUE constraint failed: "
        "a later version of this stream is stored'); END"
    )


def ensure_fence(recorder: SQLiteApplicationRecorder) -> None:
    """Create the version fence of the events table if it is missing."""
    table = recorder.events_table_name
    name = FENCE_TRIGGER.format(table=table)
    with recorder.datastore.transaction(commit=False) as c:
        c.execute("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,))
        if c.fetchone() is not None:
            return
    with recorder.datastore.transaction(commit=True) as c:
        c.execute(fence_statement(table))


def scrub(log: Application[UUID]) -> None:
    """Merge the search index (dropping the deleted words) and empty the write-ahead log."""
    recorder = log.recorder
    assert isinstance(recorder, SQLiteApplicationRecorder)
    datastore = recorder.datastore
    with datastore.transaction(commit=True) as c:
        c.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (SEARCH_TABLE,))
        if c.fetchone() is not None:
            c.execute(f"INSERT INTO {SEARCH_TABLE} ({SEARCH_TABLE}) VALUES ('optimize')")
    _truncate_wal(datastore, float(datastore.pool.lock_timeout or 5))


def _truncate_wal(datastore: SQLiteDatastore, timeout: float) -> None:
    """Checkpoint every frame into the file and truncate the WAL to zero bytes (a database
    not in WAL mode, such as memory://, answers at once)."""
    deadline = time.monotonic() + timeout
    while True:
        with datastore.get_connection(commit=True) as connection:
            row = (
                connection.cursor()
                .sqlite_cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                .fetchone()
            )
        if row[0] == 0:
            return
        if time.monotonic() > deadline:
            raise OperationalError(
                "could not empty the write-ahead log: another connection kept reading old frames"
            )
        time.sleep(CHECKPOINT_WAIT)
