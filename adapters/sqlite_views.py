"""The read models on SQLite: plain tables in the same file as the events.

Views are kept exactly once: the rows of a batch and the tracked log position (the library's
`tracking` table) commit in one transaction, and re-offering a tracked position fails and
rolls back. Writes only append events; every query first brings the views up to the log
head (`catch_up`, many events per transaction), so a read reflects every write that
returned before it, in any process, and a burst of appends is projected in one batch.
View transactions commit at `synchronous=NORMAL`: the views are derived data, and a power
cut can only roll back their tail together with its tracked position, which the next
catch-up projects again. `rebuild` replays the log into fresh tables and swaps them in
atomically.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import (
    IntegrityError,
    Mapper,
    OperationalError,
    StoredEvent,
    Tracking,
)
from eventsourcing.sqlite import (
    SQLiteCursor,
    SQLiteDatastore,
    SQLiteTrackingRecorder,
)

from ..domain.messages import Message
from ..projections.projector import LogEntry, Projector, ViewState
from ..projections.rows import (
    VIEW_NAMES,
    ActiveRow,
    AttemptRow,
    HistoryRow,
    QuarantineRow,
    SessionRow,
    ViewChanges,
)
from ..projections.views import Progress, SessionRows, TranscriptViews, ViewStatus

TRACKING_NAME = "transcripts"
REBUILD_TRACKING_NAME = "transcripts~rebuild"
BATCH_SIZE = 1000
INLINE_LAG_LIMIT = 100  # a writer projects inline only when the views are this close to the log
REBUILD_SUFFIX = "__next"
QUARANTINE = "quarantined_events"


@dataclass(frozen=True)
class Tables:
    """Names of one set of view tables: the live ones, or a set being rebuilt."""

    suffix: str = ""

    def __getattr__(self, view: str) -> str:
        if view not in (*VIEW_NAMES, QUARANTINE):
            raise AttributeError(view)
        return view + self.suffix

    def create_statements(self) -> list[str]:
        active, history, attempts, sessions, quarantine = (
            self.active_messages,
            self.message_history,
            self.compaction_attempts,
            self.sessions,
            self.quarantined_events,
        )
        return [
            f"CREATE TABLE IF NOT EXISTS {sessions} ("
            "session_id TEXT PRIMARY KEY, transcript_id TEXT NOT NULL UNIQUE, "
            "source TEXT NOT NULL, model TEXT, parent_id TEXT, metadata TEXT NOT NULL, "
            "started_at TEXT NOT NULL, last_event_at TEXT NOT NULL, version INTEGER NOT NULL, "
            "message_count INTEGER NOT NULL, active_count INTEGER NOT NULL, "
            "compactions_committed INTEGER NOT NULL, compactions_failed INTEGER NOT NULL, "
            "quarantined INTEGER NOT NULL)",
            f"CREATE TABLE IF NOT EXISTS {active} ("
            "session_id TEXT NOT NULL, position INTEGER NOT NULL, message_id TEXT NOT NULL, "
            "role TEXT NOT NULL, message TEXT NOT NULL, "
            "PRIMARY KEY (session_id, position), UNIQUE (session_id, message_id)) WITHOUT ROWID",
            f"CREATE TABLE IF NOT EXISTS {history} ("
            "session_id TEXT NOT NULL, seq INTEGER NOT NULL, message_id TEXT NOT NULL, "
            "role TEXT NOT NULL, message TEXT NOT NULL, active INTEGER NOT NULL, "
            "superseded_by TEXT, added_by TEXT, appended_at TEXT NOT NULL, "
            "appended_version INTEGER NOT NULL, "
            "PRIMARY KEY (session_id, seq), UNIQUE (session_id, message_id))",
            f"CREATE TABLE IF NOT EXISTS {attempts} ("
            "compaction_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, version INTEGER NOT NULL, "
            "status TEXT NOT NULL, reason TEXT NOT NULL, failure TEXT, error TEXT, "
            "based_on_version INTEGER NOT NULL, superseded_count INTEGER NOT NULL, "
            "added_count INTEGER NOT NULL, superseded_ids TEXT NOT NULL, added_ids TEXT NOT NULL, "
            "tokens_before INTEGER, tokens_after INTEGER, at TEXT NOT NULL, "
            "UNIQUE (session_id, version))",
            f"CREATE TABLE IF NOT EXISTS {quarantine} ("
            "position INTEGER PRIMARY KEY, transcript_id TEXT NOT NULL, session_id TEXT, "
            "version INTEGER NOT NULL, topic TEXT NOT NULL, reason TEXT NOT NULL)",
        ]


LIVE = Tables()
NEXT = Tables(REBUILD_SUFFIX)


def _json(value: object) -> str:
    return orjson.dumps(value).decode()


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _session_row(row: Any) -> SessionRow:
    return SessionRow(
        session_id=row["session_id"],
        transcript_id=row["transcript_id"],
        source=row["source"],
        model=row["model"],
        parent_id=row["parent_id"],
        metadata=orjson.loads(row["metadata"]),
        started_at=_time(row["started_at"]),
        last_event_at=_time(row["last_event_at"]),
        version=row["version"],
        message_count=row["message_count"],
        active_count=row["active_count"],
        compactions_committed=row["compactions_committed"],
        compactions_failed=row["compactions_failed"],
        quarantined=row["quarantined"],
    )


def _active_row(row: Any) -> ActiveRow:
    return ActiveRow(
        row["session_id"],
        row["position"],
        row["message_id"],
        row["role"],
        orjson.loads(row["message"]),
    )


def _history_row(row: Any) -> HistoryRow:
    return HistoryRow(
        session_id=row["session_id"],
        seq=row["seq"],
        message_id=row["message_id"],
        role=row["role"],
        message=orjson.loads(row["message"]),
        active=bool(row["active"]),
        superseded_by=row["superseded_by"],
        added_by=row["added_by"],
        appended_at=_time(row["appended_at"]),
        appended_version=row["appended_version"],
    )


def _attempt_row(row: Any) -> AttemptRow:
    return AttemptRow(
        compaction_id=row["compaction_id"],
        session_id=row["session_id"],
        version=row["version"],
        status=row["status"],
        reason=row["reason"],
        failure=row["failure"],
        error=row["error"],
        based_on_version=row["based_on_version"],
        superseded_ids=orjson.loads(row["superseded_ids"]),
        added_ids=orjson.loads(row["added_ids"]),
        tokens_before=row["tokens_before"],
        tokens_after=row["tokens_after"],
        at=_time(row["at"]),
    )


class _CursorState(ViewState):
    """What the projector reads, inside the transaction that will write its changes."""

    def __init__(self, cursor: SQLiteCursor, tables: Tables) -> None:
        self.cursor = cursor
        self.tables = tables

    def load_session(self, transcript_id: str) -> SessionRow | None:
        self.cursor.execute(
            f"SELECT * FROM {self.tables.sessions} WHERE transcript_id = ?", (transcript_id,)
        )
        row = self.cursor.fetchone()
        return _session_row(row) if row is not None else None

    def load_active(self, session_id: str) -> list[ActiveRow]:
        self.cursor.execute(
            f"SELECT * FROM {self.tables.active_messages} WHERE session_id = ? ORDER BY position",
            (session_id,),
        )
        return [_active_row(row) for row in self.cursor.fetchall()]


class SQLiteTranscriptViews(SQLiteTrackingRecorder, TranscriptViews):
    """The views of one SQLite store (file or memory), sharing the events' datastore."""

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
        super().__init__(datastore)

    def construct_create_table_statements(self) -> list[str]:
        return [
            *super().construct_create_table_statements(),
            *LIVE.create_statements(),
            "CREATE TABLE IF NOT EXISTS view_versions "
            "(view TEXT PRIMARY KEY, version INTEGER NOT NULL)",
        ]

    # -- queries ---------------------------------------------------------------------------

    @contextmanager
    def _reading(self) -> Iterator[SQLiteCursor]:
        with self.datastore.transaction(commit=False) as cursor:
            yield cursor

    def active(self, session_id: str) -> list[Message] | None:
        with self._current() as c:
            c.execute(
                "SELECT message FROM active_messages WHERE session_id = ? ORDER BY position",
                (session_id,),
            )
            messages = [orjson.loads(row[0]) for row in c.fetchall()]
            if not messages and not self._exists(c, session_id):
                return None
            return messages

    def history(self, session_id: str) -> list[HistoryRow] | None:
        with self._current() as c:
            c.execute(
                "SELECT * FROM message_history WHERE session_id = ? ORDER BY seq", (session_id,)
            )
            rows = [_history_row(row) for row in c.fetchall()]
            return rows if rows or self._exists(c, session_id) else None

    def attempts(self, session_id: str) -> list[AttemptRow] | None:
        with self._current() as c:
            c.execute(
                "SELECT * FROM compaction_attempts WHERE session_id = ? ORDER BY version",
                (session_id,),
            )
            rows = [_attempt_row(row) for row in c.fetchall()]
            return rows if rows or self._exists(c, session_id) else None

    def snapshot(self, session_id: str) -> tuple[int, list[Message]] | None:
        with self._current() as c:
            c.execute("SELECT version FROM sessions WHERE session_id = ?", (session_id,))
            row = c.fetchone()
            if row is None:
                return None
            c.execute(
                "SELECT message FROM active_messages WHERE session_id = ? ORDER BY position",
                (session_id,),
            )
            return row[0], [orjson.loads(message) for (message,) in c.fetchall()]

    def session(self, session_id: str) -> SessionRow | None:
        with self._current() as c:
            c.execute("SELECT * FROM sessions WHERE session_id = ?", (session_id,))
            row = c.fetchone()
            return _session_row(row) if row is not None else None

    def sessions(self) -> list[SessionRow]:
        with self._current() as c:
            c.execute("SELECT * FROM sessions ORDER BY started_at, session_id")
            return [_session_row(row) for row in c.fetchall()]

    def message(self, session_id: str, message_id: str) -> HistoryRow | None:
        with self._current() as c:
            c.execute(
                "SELECT * FROM message_history WHERE session_id = ? AND message_id = ?",
                (session_id, message_id),
            )
            row = c.fetchone()
            return _history_row(row) if row is not None else None

    def active_position(self, session_id: str, message_id: str) -> int | None:
        with self._current() as c:
            c.execute(
                "SELECT position FROM active_messages WHERE session_id = ? AND message_id = ?",
                (session_id, message_id),
            )
            row = c.fetchone()
            return row[0] if row is not None else None

    def attempt(self, compaction_id: str) -> AttemptRow | None:
        with self._current() as c:
            c.execute("SELECT * FROM compaction_attempts WHERE compaction_id = ?", (compaction_id,))
            row = c.fetchone()
            return _attempt_row(row) if row is not None else None

    def rows(self, session_id: str) -> SessionRows:
        with self._current() as c:
            c.execute("SELECT * FROM sessions WHERE session_id = ?", (session_id,))
            session = c.fetchone()
            c.execute(
                "SELECT * FROM active_messages WHERE session_id = ? ORDER BY position",
                (session_id,),
            )
            active = [_active_row(row) for row in c.fetchall()]
            c.execute(
                "SELECT * FROM message_history WHERE session_id = ? ORDER BY seq", (session_id,)
            )
            history = [_history_row(row) for row in c.fetchall()]
            c.execute(
                "SELECT * FROM compaction_attempts WHERE session_id = ? ORDER BY version",
                (session_id,),
            )
            attempts = [_attempt_row(row) for row in c.fetchall()]
        return SessionRows(_session_row(session) if session else None, active, history, attempts)

    def session_ids(self) -> Iterator[str]:
        with self._current() as c:
            c.execute(
                "SELECT session_id FROM sessions UNION SELECT session_id FROM active_messages "
                "UNION SELECT session_id FROM message_history "
                "UNION SELECT session_id FROM compaction_attempts"
            )
            return iter([row[0] for row in c.fetchall()])

    def quarantined(self) -> list[QuarantineRow]:
        with self._current() as c:
            c.execute(f"SELECT * FROM {QUARANTINE} ORDER BY position")
            return [QuarantineRow(**dict(row)) for row in c.fetchall()]

    @staticmethod
    def _exists(c: SQLiteCursor, session_id: str) -> bool:
        c.execute("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,))
        return c.fetchone() is not None

    # -- keeping the views up to date -------------------------------------------------------

    def catch_up(self, progress: Progress | None = None) -> int:
        return self._catch_up(LIVE, TRACKING_NAME, progress)

    @contextmanager
    def _current(self) -> Iterator[SQLiteCursor]:
        """A read transaction on views that reflect the whole log (caught up first if behind)."""
        while True:
            with self._reading() as c:
                if self._position(c, TRACKING_NAME) >= self._head(c):
                    yield c
                    return
            self.catch_up()

    def _head(self, c: SQLiteCursor) -> int:
        c.execute(f"SELECT MAX(rowid) FROM {self.events_table}")
        return c.fetchone()[0] or 0

    def rebuild(self, progress: Progress | None = None) -> int:
        with self._writing() as c:
            for table in (*VIEW_NAMES, QUARANTINE):
                c.execute(f"DROP TABLE IF EXISTS {getattr(NEXT, table)}")
            for statement in NEXT.create_statements():
                c.execute(statement)
            c.execute("DELETE FROM tracking WHERE application_name = ?", (REBUILD_TRACKING_NAME,))
        try:
            done = self._catch_up(NEXT, REBUILD_TRACKING_NAME, progress)
            with (
                self._writing() as c
            ):  # writers wait while the last entries go in and the tables swap
                done += self._swap_in_rebuilt(c)
        except OperationalError:
            if self._rebuilt_by_another():
                return 0
            raise
        return done

    def _swap_in_rebuilt(self, c: SQLiteCursor) -> int:
        done = 0
        while count := self._project_batch(
            c, NEXT, REBUILD_TRACKING_NAME, self._position(c, REBUILD_TRACKING_NAME)
        ):
            done += count
        position = self._position(c, REBUILD_TRACKING_NAME)
        tables = (*VIEW_NAMES, QUARANTINE)
        c.execute(  # indexes users made on the views: they are made again on the new tables
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            f"AND tbl_name IN ({','.join('?' * len(tables))})",
            tables,
        )
        user_indexes = [row[0] for row in c.fetchall()]
        for table in tables:
            c.execute(f"DROP TABLE {table}")
            c.execute(f"ALTER TABLE {getattr(NEXT, table)} RENAME TO {table}")
        for statement in user_indexes:
            c.execute(statement)
        c.execute(
            "DELETE FROM tracking WHERE application_name IN (?, ?)",
            (TRACKING_NAME, REBUILD_TRACKING_NAME),
        )
        if position:
            self._insert_tracking(c, Tracking(TRACKING_NAME, position))
        self._write_versions(c)
        return done

    def _rebuilt_by_another(self) -> bool:
        """Whether a concurrent rebuild swapped its tables in (and took ours with it)."""
        with self._reading() as c:
            c.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (NEXT.sessions,))
            return c.fetchone() is None and self._versions(c) == self.projector.VERSIONS

    def create_table(self) -> None:
        try:
            super().create_table()
        except IntegrityError:  # another process created the tracking table at the same time
            super().create_table()

    def ensure_current(self) -> None:
        with self._writing() as c:
            if self._versions(c) == self.projector.VERSIONS:
                return
            c.execute(f"SELECT 1 FROM {self.events_table} LIMIT 1")
            if c.fetchone() is None:  # a new store: nothing to rebuild
                self._write_versions(c)
                return
        self.rebuild()

    @staticmethod
    def _versions(c: SQLiteCursor) -> dict[str, int]:
        c.execute("SELECT view, version FROM view_versions")
        return {row[0]: row[1] for row in c.fetchall()}

    def status(self) -> list[ViewStatus]:
        with self._reading() as c:
            position = self._position(c, TRACKING_NAME)
            c.execute(f"SELECT MAX(rowid) FROM {self.events_table}")
            head = c.fetchone()[0] or 0
            c.execute(f"SELECT COUNT(*) FROM {QUARANTINE}")
            quarantined = c.fetchone()[0]
            statuses = []
            for view in VIEW_NAMES:
                c.execute(f"SELECT COUNT(*) FROM {view}")
                rows = c.fetchone()[0]
                statuses.append(
                    ViewStatus(
                        view, self.projector.VERSIONS[view], position, head, rows, quarantined
                    )
                )
        return statuses

    def _catch_up(self, tables: Tables, tracking_name: str, progress: Progress | None) -> int:
        done = 0
        with self._reading() as c:
            start = self._position(c, tracking_name)
            c.execute(f"SELECT MAX(rowid) FROM {self.events_table}")
            total = (c.fetchone()[0] or 0) - start
        while True:
            with self._writing() as c:
                count = self._project_batch(
                    c, tables, tracking_name, self._position(c, tracking_name)
                )
            if not count:
                return done
            done += count
            if progress is not None:
                progress(min(done, total), max(total, done))

    def _project_batch(
        self,
        c: SQLiteCursor,
        tables: Tables,
        tracking_name: str,
        position: int,
        limit: int = BATCH_SIZE,
    ) -> int:
        """Project the entries after `position` into `tables`; return how many were taken."""
        c.execute(
            "SELECT rowid, originator_id, originator_version, topic, state "
            f"FROM {self.events_table} "
            "WHERE rowid > ? ORDER BY rowid LIMIT ?",
            (position, limit),
        )
        entries = [self._entry(row) for row in c.fetchall()]
        if entries:
            self._project_entries(c, tables, tracking_name, entries)
        return len(entries)

    def _project_entries(
        self, c: SQLiteCursor, tables: Tables, tracking_name: str, entries: list[LogEntry]
    ) -> None:
        c.execute("SAVEPOINT batch")
        try:
            self._write(c, tables, self.projector(_CursorState(c, tables)).project(entries))
        except Exception:
            c.execute("ROLLBACK TO batch")
            for entry in entries:  # one by one, to quarantine exactly the entries at fault
                self._project_alone(c, tables, entry)
        c.execute("RELEASE batch")
        self._insert_tracking(c, Tracking(tracking_name, entries[-1].position))

    def _project_alone(self, c: SQLiteCursor, tables: Tables, entry: LogEntry) -> None:
        c.execute("SAVEPOINT entry")
        try:
            self._write(c, tables, self.projector(_CursorState(c, tables)).project([entry]))
        except Exception as fault:
            c.execute("ROLLBACK TO entry")
            reason = f"the views could not take it: {type(fault).__name__}: {fault}"
            session = _CursorState(c, tables).load_session(entry.transcript_id)
            self._write_quarantine(
                c,
                tables,
                [
                    QuarantineRow(
                        entry.position,
                        entry.transcript_id,
                        session.session_id if session else None,
                        entry.version,
                        entry.topic,
                        reason,
                    )
                ],
            )
            if session is not None:
                c.execute(
                    f"UPDATE {tables.sessions} SET quarantined = quarantined + 1 "
                    "WHERE session_id = ?",
                    (session.session_id,),
                )
        c.execute("RELEASE entry")

    def _entry(self, row: Any) -> LogEntry:
        entry = LogEntry(
            row["rowid"], row["originator_id"], row["originator_version"], row["topic"]
        )
        try:
            stored = StoredEvent(
                UUID(entry.transcript_id), entry.version, entry.topic, row["state"]
            )
        except ValueError as fault:
            return replace(entry, undecodable=f"bad originator id: {fault}")
        return self._decoded(entry, stored)

    def _decoded(self, entry: LogEntry, stored: StoredEvent) -> LogEntry:
        try:
            return replace(entry, event=self.mapper.to_domain_event(stored))
        except Exception as fault:
            return replace(entry, undecodable=f"{type(fault).__name__}: {fault}")

    def _write(self, c: SQLiteCursor, tables: Tables, changes: ViewChanges) -> None:
        if changes.history_inserts:
            c.executemany(
                f"INSERT INTO {tables.message_history} VALUES (?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        h.session_id,
                        h.seq,
                        h.message_id,
                        h.role,
                        _json(h.message),
                        int(h.active),
                        h.superseded_by,
                        h.added_by,
                        h.appended_at.isoformat(),
                        h.appended_version,
                    )
                    for h in changes.history_inserts.values()
                ],
            )
        if changes.superseded:
            c.executemany(
                f"UPDATE {tables.message_history} SET active = 0, superseded_by = ? "
                "WHERE session_id = ? AND message_id = ?",
                changes.superseded,
            )
        for session_id, rows in changes.active_rewrites.items():
            c.execute(f"DELETE FROM {tables.active_messages} WHERE session_id = ?", (session_id,))
            self._insert_active(c, tables, rows)
        self._insert_active(c, tables, changes.active_appends)
        if changes.attempts:
            c.executemany(
                f"INSERT INTO {tables.compaction_attempts} VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        a.compaction_id,
                        a.session_id,
                        a.version,
                        a.status,
                        a.reason,
                        a.failure,
                        a.error,
                        a.based_on_version,
                        len(a.superseded_ids),
                        len(a.added_ids),
                        _json(a.superseded_ids),
                        _json(a.added_ids),
                        a.tokens_before,
                        a.tokens_after,
                        a.at.isoformat(),
                    )
                    for a in changes.attempts
                ],
            )
        started = [s for t, s in changes.sessions.items() if t in changes.started]
        if started:
            c.executemany(
                f"INSERT INTO {tables.sessions} VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (s.session_id, s.transcript_id, s.source, s.model, s.parent_id,
                     _json(s.metadata), s.started_at.isoformat(), s.last_event_at.isoformat(),
                     s.version, s.message_count, s.active_count, s.compactions_committed,
                     s.compactions_failed, s.quarantined)
                    for s in started
                ],
            )  # fmt: skip
        updated = [s for t, s in changes.sessions.items() if t not in changes.started]
        if updated:
            c.executemany(
                f"UPDATE {tables.sessions} SET last_event_at = ?, version = ?, message_count = ?, "
                "active_count = ?, compactions_committed = ?, compactions_failed = ?, "
                "quarantined = ? WHERE session_id = ?",
                [
                    (s.last_event_at.isoformat(), s.version, s.message_count, s.active_count,
                     s.compactions_committed, s.compactions_failed, s.quarantined, s.session_id)
                    for s in updated
                ],
            )  # fmt: skip
        self._write_quarantine(c, tables, changes.quarantine)

    @staticmethod
    def _insert_active(c: SQLiteCursor, tables: Tables, rows: Sequence[ActiveRow]) -> None:
        if rows:
            c.executemany(
                f"INSERT INTO {tables.active_messages} VALUES (?,?,?,?,?)",
                [(a.session_id, a.position, a.message_id, a.role, _json(a.message)) for a in rows],
            )

    @staticmethod
    def _write_quarantine(c: SQLiteCursor, tables: Tables, rows: Sequence[QuarantineRow]) -> None:
        if rows:
            c.executemany(
                f"INSERT INTO {tables.quarantined_events} VALUES (?,?,?,?,?,?)",
                [
                    (q.position, q.transcript_id, q.session_id, q.version, q.topic, q.reason)
                    for q in rows
                ],
            )

    def _write_versions(self, c: SQLiteCursor) -> None:
        c.execute("DELETE FROM view_versions")
        c.executemany(
            "INSERT INTO view_versions VALUES (?, ?)", list(self.projector.VERSIONS.items())
        )

    def _position(self, c: SQLiteCursor, tracking_name: str) -> int:
        return self._max_tracking_id(tracking_name, c) or 0

    @contextmanager
    def _writing(self) -> Iterator[SQLiteCursor]:
        """A view transaction: it takes the lock first (BEGIN IMMEDIATE) and commits without
        waiting for the disk (`synchronous=NORMAL`): views are derived from the log."""
        with self.datastore.get_connection(commit=True) as connection:
            cursor = connection.cursor()
            try:
                cursor.execute("PRAGMA synchronous = NORMAL")
                try:
                    cursor.execute("BEGIN IMMEDIATE")
                    try:
                        yield cursor
                    except BaseException:
                        connection.rollback()
                        raise
                    connection.commit()
                finally:
                    cursor.execute("PRAGMA synchronous = FULL")
            except sqlite3.OperationalError as error:
                raise OperationalError(error) from error
