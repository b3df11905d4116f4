"""The read models on a SQL database, whatever the dialect: plain tables users may query.

Views are kept exactly once: the rows of a batch and the tracked log position (the library's
tracking table) commit in one transaction, and re-offering a tracked position fails and
rolls back. Writes only append events; every query first brings the views up to the log
head (`catch_up`, many events per transaction), so a read reflects every write that
returned before it, in any process, and a burst of appends is projected in one batch.
`rebuild` replays the log into fresh tables and swaps them in atomically; `follow` keeps
the views up to date as the log grows.

A dialect (`sqlite_views`, `postgres_views`) supplies transactions and their locking, the
column types, the log position column of the events table, how values are stored (JSON,
times, booleans) and what the rebuild swap needs to know about the database's catalog.
The SQL here is written with `?` placeholders and names every column it reads.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from functools import cached_property, lru_cache
from typing import Any, ClassVar, Protocol
from uuid import UUID

import orjson
from eventsourcing.persistence import Mapper, PersistenceError, StoredEvent, Tracking

from ....domain.errors import InvalidSearchError
from ....domain.messages import Message
from ....projections.projector import LogEntry, Projector, ViewState
from ....projections.rows import (
    VIEW_NAMES,
    ActiveRow,
    AttemptRow,
    HistoryRow,
    QuarantineRow,
    SessionRow,
    ViewChanges,
)
from ....projections.views import Progress, SearchHit, SessionRows, TranscriptViews, ViewStatus
from ..sealing import (
    ENCRYPTION_SETTING,
    SETTINGS_TABLE,
    ContentColumns,
    SealedColumns,
    check_setting,
    content_columns,
)
from .schema import LIVE, NEXT, QUARANTINE, VERSIONS_TABLE, ColumnTypes, Tables

TRACKING_NAME = "transcripts"
REBUILD_TRACKING_NAME = "transcripts~rebuild"
BATCH_SIZE = 1000
FOLLOW_POLL_INTERVAL = 0.2  # seconds between polls where the database cannot notify

Cursor = Any  # a DB-API cursor whose rows are read by column name
Followed = Callable[[int], None]  # on_batch(events projected)


class Search(Protocol):
    def __call__(
        self,
        cursor: Cursor,
        query: str,
        *,
        session_id: str | None,
        role: str | None,
        active_only: bool,
        limit: int,
    ) -> list[SearchHit]: ...


@lru_cache(maxsize=4096)
def _uuid(text: str) -> UUID:
    return UUID(text)


def _json(value: object) -> str:
    return orjson.dumps(value).decode()


class _CursorState(ViewState):
    """What the projector reads, inside the transaction that will write its changes."""

    def __init__(self, views: SQLTranscriptViews, cursor: Cursor, tables: Tables) -> None:
        self.views = views
        self.cursor = cursor
        self.tables = tables

    def load_session(self, transcript_id: str) -> SessionRow | None:
        self.cursor.execute(
            f"SELECT * FROM {self.tables.sessions} WHERE transcript_id = ?", (transcript_id,)
        )
        row = self.cursor.fetchone()
        return self.views._session_row(row) if row is not None else None

    def load_active(self, session_id: str) -> list[ActiveRow]:
        self.cursor.execute(
            f"SELECT * FROM {self.tables.active_messages} WHERE session_id = ? ORDER BY position",
            (session_id,),
        )
        return [self.views._active_row(row) for row in self.cursor.fetchall()]


class SQLTranscriptViews(TranscriptViews):
    """The views of one store on a SQL database; a dialect subclass fills in the hooks.

    Mixed with the library's tracking recorder of the dialect, which gives
    `_insert_tracking(cursor, tracking)` and `_max_tracking_id(name, cursor)`.
    """

    COLUMNS: ClassVar[ColumnTypes]
    POSITION: ClassVar[str]  # the log position column of the events table
    CIPHERTEXT_AS_TEXT: ClassVar[bool]  # whether columns need ciphertext as text (base64)
    SEARCH: ClassVar[Search]  # the dialect's full-text search of `message_history`

    mapper: Mapper[UUID]
    projector: type[Projector]
    events_table: str  # the library's table of stored events
    tracking_table: str  # the library's tracking table

    # -- dialect hooks ---------------------------------------------------------------------

    @abstractmethod
    def _reading(self) -> AbstractContextManager[Cursor]:
        """A read-only transaction that sees one consistent state of the database."""

    @abstractmethod
    def _writing(self, *, rebuilding: bool = False) -> AbstractContextManager[Cursor]:
        """A view transaction, holding the views' write lock from its start, committed at
        the end: two of them never project at once. `rebuilding`: one of a rebuild's bulk
        transactions (a dialect may tune them)."""

    @abstractmethod
    def _table_exists(self, c: Cursor, name: str) -> bool: ...

    @abstractmethod
    def _user_indexes(self, c: Cursor, tables: Sequence[str]) -> list[str]:
        """The statements creating the indexes users made on `tables` (not the schema's)."""

    def _swap_table(self, c: Cursor, live: str, rebuilt: str) -> None:
        c.execute(f"DROP TABLE {live}")
        c.execute(f"ALTER TABLE {rebuilt} RENAME TO {live}")

    def _derived_statements(self, tables: Tables) -> list[str]:
        """What a dialect derives from a set of view tables (e.g. a search index)."""
        return []

    def _derived_tables(self, tables: Tables) -> list[str]:
        """The tables `_derived_statements` creates, swapped in with the views on a rebuild."""
        return []

    def _before_swap(self, c: Cursor) -> None:
        """Make the rebuilt tables ready to take the live tables' names."""

    def _after_swap(self, c: Cursor) -> None:
        """Finish what the swapped-in tables need under their live names."""

    def search(
        self,
        query: str,
        *,
        session_id: str | None = None,
        role: str | None = None,
        active_only: bool = False,
        limit: int = 20,
    ) -> list[SearchHit]:
        if not query.strip():
            raise InvalidSearchError("the search query is empty")
        with self._current() as c:
            return self.SEARCH(
                c, query, session_id=session_id, role=role, active_only=active_only, limit=limit
            )

    @staticmethod
    @abstractmethod
    def _load_json(value: Any) -> Any: ...

    @staticmethod
    @abstractmethod
    def _load_time(value: Any) -> datetime: ...

    @staticmethod
    @abstractmethod
    def _time_param(value: datetime) -> Any: ...

    @staticmethod
    @abstractmethod
    def _bool_param(value: bool) -> Any: ...

    # -- content columns (encrypted on an encrypted store) ---------------------------------

    @cached_property
    def content(self) -> ContentColumns:
        return content_columns(self.mapper.cipher, as_text=self.CIPHERTEXT_AS_TEXT)

    def _json_content(self, stored: Any) -> Any:
        """A message or metadata column's value, decrypted on an encrypted store."""
        content = self.content
        if isinstance(content, SealedColumns):
            return content.open_json(stored)
        return self._load_json(stored)

    def _check_encryption(self, c: Cursor) -> None:
        """Record whether a new store is encrypted; refuse a key that cannot read this one."""
        c.execute(f"SELECT value FROM {SETTINGS_TABLE} WHERE name = ?", (ENCRYPTION_SETTING,))
        row = c.fetchone()
        if row is not None:
            check_setting(self.content, row["value"])
            return
        c.execute(f"SELECT 1 AS found FROM {self.events_table} LIMIT 1")
        if c.fetchone() is not None:  # made before stores recorded it: not encrypted
            check_setting(self.content, content_columns(None).setting())
        c.execute(
            f"INSERT INTO {SETTINGS_TABLE} VALUES (?, ?)",
            (ENCRYPTION_SETTING, self.content.setting()),
        )

    # -- rows ------------------------------------------------------------------------------

    def _session_row(self, row: Any) -> SessionRow:
        return SessionRow(
            session_id=row["session_id"],
            transcript_id=row["transcript_id"],
            source=row["source"],
            model=row["model"],
            parent_id=row["parent_id"],
            metadata=self._json_content(row["metadata"]),
            started_at=self._load_time(row["started_at"]),
            last_event_at=self._load_time(row["last_event_at"]),
            version=row["version"],
            message_count=row["message_count"],
            active_count=row["active_count"],
            compactions_committed=row["compactions_committed"],
            compactions_failed=row["compactions_failed"],
            quarantined=row["quarantined"],
            erased_at=None if row["erased_at"] is None else self._load_time(row["erased_at"]),
        )

    def _active_row(self, row: Any) -> ActiveRow:
        return ActiveRow(
            row["session_id"],
            row["position"],
            row["message_id"],
            row["role"],
            self._json_content(row["message"]),
        )

    def _history_row(self, row: Any) -> HistoryRow:
        return HistoryRow(
            session_id=row["session_id"],
            seq=row["seq"],
            message_id=row["message_id"],
            role=row["role"],
            message=self._json_content(row["message"]),
            active=bool(row["active"]),
            superseded_by=row["superseded_by"],
            added_by=row["added_by"],
            appended_at=self._load_time(row["appended_at"]),
            appended_version=row["appended_version"],
        )

    def _attempt_row(self, row: Any) -> AttemptRow:
        return AttemptRow(
            compaction_id=row["compaction_id"],
            session_id=row["session_id"],
            version=row["version"],
            status=row["status"],
            reason=self.content.open_text(row["reason"]) or "",
            failure=row["failure"],
            error=self.content.open_text(row["error"]),
            based_on_version=row["based_on_version"],
            superseded_ids=self._load_json(row["superseded_ids"]),
            added_ids=self._load_json(row["added_ids"]),
            superseded_count=row["superseded_count"],
            added_count=row["added_count"],
            tokens_before=row["tokens_before"],
            tokens_after=row["tokens_after"],
            at=self._load_time(row["at"]),
        )

    # -- schema ----------------------------------------------------------------------------

    def view_create_statements(self) -> list[str]:
        return [
            *self.COLUMNS.create_statements(LIVE),
            *self._derived_statements(LIVE),
            self.COLUMNS.versions_statement(),
            self.COLUMNS.settings_statement(),
        ]

    # -- queries ---------------------------------------------------------------------------

    def active(self, session_id: str) -> list[Message] | None:
        with self._current() as c:
            c.execute(
                "SELECT message FROM active_messages WHERE session_id = ? ORDER BY position",
                (session_id,),
            )
            messages = [self._json_content(row["message"]) for row in c.fetchall()]
            if not messages and not self._exists(c, session_id):
                return None
            return messages

    def history(self, session_id: str) -> list[HistoryRow] | None:
        with self._current() as c:
            c.execute(
                "SELECT * FROM message_history WHERE session_id = ? ORDER BY seq", (session_id,)
            )
            rows = [self._history_row(row) for row in c.fetchall()]
            return rows if rows or self._exists(c, session_id) else None

    def attempts(self, session_id: str) -> list[AttemptRow] | None:
        with self._current() as c:
            c.execute(
                "SELECT * FROM compaction_attempts WHERE session_id = ? ORDER BY version",
                (session_id,),
            )
            rows = [self._attempt_row(row) for row in c.fetchall()]
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
            return row["version"], [
                self._json_content(active["message"]) for active in c.fetchall()
            ]

    def session(self, session_id: str) -> SessionRow | None:
        with self._current() as c:
            c.execute("SELECT * FROM sessions WHERE session_id = ?", (session_id,))
            row = c.fetchone()
            return self._session_row(row) if row is not None else None

    def sessions(self) -> list[SessionRow]:
        with self._current() as c:
            c.execute("SELECT * FROM sessions ORDER BY started_at, session_id")
            return [self._session_row(row) for row in c.fetchall()]

    def message(self, session_id: str, message_id: str) -> HistoryRow | None:
        with self._current() as c:
            c.execute(
                "SELECT * FROM message_history WHERE session_id = ? AND message_id = ?",
                (session_id, message_id),
            )
            row = c.fetchone()
            return self._history_row(row) if row is not None else None

    def active_position(self, session_id: str, message_id: str) -> int | None:
        with self._current() as c:
            c.execute(
                "SELECT position FROM active_messages WHERE session_id = ? AND message_id = ?",
                (session_id, message_id),
            )
            row = c.fetchone()
            return row["position"] if row is not None else None

    def attempt(self, compaction_id: str) -> AttemptRow | None:
        with self._current() as c:
            c.execute("SELECT * FROM compaction_attempts WHERE compaction_id = ?", (compaction_id,))
            row = c.fetchone()
            return self._attempt_row(row) if row is not None else None

    def rows(self, session_id: str) -> SessionRows:
        with self._current() as c:
            c.execute("SELECT * FROM sessions WHERE session_id = ?", (session_id,))
            session = c.fetchone()
            c.execute(
                "SELECT * FROM active_messages WHERE session_id = ? ORDER BY position",
                (session_id,),
            )
            active = [self._active_row(row) for row in c.fetchall()]
            c.execute(
                "SELECT * FROM message_history WHERE session_id = ? ORDER BY seq", (session_id,)
            )
            history = [self._history_row(row) for row in c.fetchall()]
            c.execute(
                "SELECT * FROM compaction_attempts WHERE session_id = ? ORDER BY version",
                (session_id,),
            )
            attempts = [self._attempt_row(row) for row in c.fetchall()]
        return SessionRows(
            self._session_row(session) if session else None, active, history, attempts
        )

    def session_ids(self) -> Iterator[str]:
        with self._current() as c:
            c.execute(
                "SELECT session_id FROM sessions UNION SELECT session_id FROM active_messages "
                "UNION SELECT session_id FROM message_history "
                "UNION SELECT session_id FROM compaction_attempts"
            )
            return iter([row["session_id"] for row in c.fetchall()])

    def quarantined(self) -> list[QuarantineRow]:
        with self._current() as c:
            c.execute(
                "SELECT position, transcript_id, session_id, version, topic, reason "
                f"FROM {QUARANTINE} ORDER BY position"
            )
            return [QuarantineRow(**dict(row)) for row in c.fetchall()]

    @staticmethod
    def _exists(c: Cursor, session_id: str) -> bool:
        c.execute("SELECT 1 AS found FROM sessions WHERE session_id = ?", (session_id,))
        return c.fetchone() is not None

    # -- keeping the views up to date -------------------------------------------------------

    def catch_up(self, progress: Progress | None = None) -> int:
        return self._catch_up(LIVE, TRACKING_NAME, progress)

    def follow(self, stop: threading.Event, on_batch: Followed | None = None) -> int:
        """Keep the views up to date until `stop` is set; return how many events were projected.

        This dialect cannot be notified of new events: it polls the log head (a read), and
        projects what is new a batch per transaction.
        """
        done = 0
        while not stop.is_set():
            with self._reading() as c:
                behind = self._position(c, TRACKING_NAME) < self._head(c)
            if not behind:
                stop.wait(FOLLOW_POLL_INTERVAL)
                continue
            count = self._project_next_batch()
            done += count
            if count and on_batch is not None:
                on_batch(count)
        return done

    def _project_next_batch(self) -> int:
        """Project the next batch of the log into the live views, in one transaction."""
        with self._writing() as c:
            return self._project_batch(c, LIVE, TRACKING_NAME, self._position(c, TRACKING_NAME))

    @contextmanager
    def _current(self) -> Iterator[Cursor]:
        """A read transaction on views that reflect the whole log (caught up first if behind)."""
        while True:
            with self._reading() as c:
                if self._position(c, TRACKING_NAME) >= self._head(c):
                    yield c
                    return
            self.catch_up()

    def _head(self, c: Cursor) -> int:
        c.execute(f"SELECT MAX({self.POSITION}) AS head FROM {self.events_table}")
        return c.fetchone()["head"] or 0

    def _position(self, c: Cursor, tracking_name: str) -> int:
        return self._max_tracking_id(tracking_name, c) or 0  # type: ignore[attr-defined]

    def _track(self, c: Cursor, tracking_name: str, position: int) -> None:
        self._insert_tracking(c, Tracking(tracking_name, position))  # type: ignore[attr-defined]

    def rebuild(self, progress: Progress | None = None) -> int:
        with self._writing(rebuilding=True) as c:
            for table in NEXT.names():
                c.execute(f"DROP TABLE IF EXISTS {table}")
            for table in self._derived_tables(NEXT):
                c.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in [
                *self.COLUMNS.create_statements(NEXT),
                *self._derived_statements(NEXT),
            ]:
                c.execute(statement)
            c.execute(
                f"DELETE FROM {self.tracking_table} WHERE application_name = ?",
                (REBUILD_TRACKING_NAME,),
            )
        try:
            done = self._catch_up(NEXT, REBUILD_TRACKING_NAME, progress)
            with self._writing(rebuilding=True) as c:  # writers wait: last entries, then swap
                done += self._swap_in_rebuilt(c)
        except PersistenceError:
            if self._rebuilt_by_another():
                return 0
            raise
        return done

    def _swap_in_rebuilt(self, c: Cursor) -> int:
        done = 0
        while count := self._project_batch(
            c, NEXT, REBUILD_TRACKING_NAME, self._position(c, REBUILD_TRACKING_NAME)
        ):
            done += count
        position = self._position(c, REBUILD_TRACKING_NAME)
        user_indexes = self._user_indexes(c, LIVE.names())  # made again on the new tables
        self._before_swap(c)
        live_tables = [*LIVE.names(), *self._derived_tables(LIVE)]
        rebuilt_tables = [*NEXT.names(), *self._derived_tables(NEXT)]
        for live, rebuilt in zip(live_tables, rebuilt_tables, strict=True):
            self._swap_table(c, live, rebuilt)
        self._after_swap(c)
        for statement in user_indexes:
            c.execute(statement)
        c.execute(
            f"DELETE FROM {self.tracking_table} WHERE application_name IN (?, ?)",
            (TRACKING_NAME, REBUILD_TRACKING_NAME),
        )
        if position:
            self._track(c, TRACKING_NAME, position)
        self._write_versions(c)
        return done

    def _rebuilt_by_another(self) -> bool:
        """Whether a concurrent rebuild swapped its tables in (and took ours with it)."""
        with self._reading() as c:
            return (
                not self._table_exists(c, NEXT.sessions)
                and self._versions(c) == self.projector.VERSIONS
            )

    def ensure_current(self) -> None:
        with self._writing() as c:
            self._check_encryption(c)
            if self._versions(c) == self.projector.VERSIONS:
                return
            c.execute(f"SELECT 1 AS found FROM {self.events_table} LIMIT 1")
            if c.fetchone() is None:  # a new store: nothing to rebuild
                self._write_versions(c)
                return
        self.rebuild()

    @staticmethod
    def _versions(c: Cursor) -> dict[str, int]:
        c.execute(f"SELECT view, version FROM {VERSIONS_TABLE}")
        return {row["view"]: row["version"] for row in c.fetchall()}

    def status(self) -> list[ViewStatus]:
        with self._reading() as c:
            position = self._position(c, TRACKING_NAME)
            head = self._head(c)
            c.execute(f"SELECT COUNT(*) AS n FROM {QUARANTINE}")
            quarantined = c.fetchone()["n"]
            statuses = []
            for view in VIEW_NAMES:
                c.execute(f"SELECT COUNT(*) AS n FROM {view}")
                rows = c.fetchone()["n"]
                statuses.append(
                    ViewStatus(
                        view, self.projector.VERSIONS[view], position, head, rows, quarantined
                    )
                )
        return statuses

    def _catch_up(self, tables: Tables, tracking_name: str, progress: Progress | None) -> int:
        done = 0
        with self._reading() as c:
            total = self._head(c) - self._position(c, tracking_name)
        while True:
            with self._writing(rebuilding=tables is NEXT) as c:
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
        c: Cursor,
        tables: Tables,
        tracking_name: str,
        position: int,
        limit: int = BATCH_SIZE,
    ) -> int:
        """Project the entries after `position` into `tables`; return how many were taken."""
        c.execute(
            f"SELECT {self.POSITION} AS position, originator_id, originator_version, topic, state "
            f"FROM {self.events_table} "
            f"WHERE {self.POSITION} > ? ORDER BY {self.POSITION} LIMIT ?",
            (position, limit),
        )
        entries = [
            self._entry(
                row["position"],
                row["originator_id"],
                row["originator_version"],
                row["topic"],
                row["state"],
            )
            for row in c.fetchall()
        ]
        if entries:
            self._project_entries(c, tables, tracking_name, entries)
        return len(entries)

    def _project_entries(
        self, c: Cursor, tables: Tables, tracking_name: str, entries: list[LogEntry]
    ) -> None:
        c.execute("SAVEPOINT batch")
        try:
            self._write(c, tables, self.projector(_CursorState(self, c, tables)).project(entries))
        except Exception:
            c.execute("ROLLBACK TO SAVEPOINT batch")
            for entry in entries:  # one by one, to quarantine exactly the entries at fault
                self._project_alone(c, tables, entry)
        c.execute("RELEASE SAVEPOINT batch")
        self._track(c, tracking_name, entries[-1].position)

    def _project_alone(self, c: Cursor, tables: Tables, entry: LogEntry) -> None:
        c.execute("SAVEPOINT entry")
        try:
            self._write(c, tables, self.projector(_CursorState(self, c, tables)).project([entry]))
        except Exception as fault:
            c.execute("ROLLBACK TO SAVEPOINT entry")
            reason = f"the views could not take it: {type(fault).__name__}: {fault}"
            session = _CursorState(self, c, tables).load_session(entry.transcript_id)
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
        c.execute("RELEASE SAVEPOINT entry")

    def _entry(
        self, position: int, originator_id: Any, version: int, topic: str, state: Any
    ) -> LogEntry:
        # The transcript id as SQLite stores it (hex); PostgreSQL gives a UUID.
        name = originator_id.hex if isinstance(originator_id, UUID) else str(originator_id)
        try:
            stored = StoredEvent(_uuid(name), version, topic, bytes(state))
        except (TypeError, ValueError) as fault:
            return LogEntry(
                position, name, version, topic, undecodable=f"bad originator id: {fault}"
            )
        try:
            event = self.mapper.to_domain_event(stored)
        except Exception as fault:
            reason = f"{type(fault).__name__}: {fault}"
            return LogEntry(position, name, version, topic, undecodable=reason)
        return LogEntry(position, name, version, topic, event)

    def _write(self, c: Cursor, tables: Tables, changes: ViewChanges) -> None:
        time, flag, content = self._time_param, self._bool_param, self.content
        for transcript in changes.erased:  # first: the batch holds no other row of theirs
            self._erase_rows(c, tables, changes.sessions[transcript].session_id, transcript)
        if changes.history_inserts:
            c.executemany(
                f"INSERT INTO {tables.message_history} VALUES (?,?,?,?,?,?,?,?,?,?)",
                [
                    (h.session_id, h.seq, h.message_id, h.role, content.json(h.message),
                     flag(h.active), h.superseded_by, h.added_by, time(h.appended_at),
                     h.appended_version)
                    for h in changes.history_inserts.values()
                ],
            )  # fmt: skip
        if changes.superseded:
            c.executemany(
                f"UPDATE {tables.message_history} SET active = ?, superseded_by = ? "
                "WHERE session_id = ? AND message_id = ?",
                [(flag(False), *superseded) for superseded in changes.superseded],
            )
        for session_id, rows in changes.active_rewrites.items():
            c.execute(f"DELETE FROM {tables.active_messages} WHERE session_id = ?", (session_id,))
            self._insert_active(c, tables, rows)
        self._insert_active(c, tables, changes.active_appends)
        if changes.attempts:
            c.executemany(
                f"INSERT INTO {tables.compaction_attempts} VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (a.compaction_id, a.session_id, a.version, a.status,
                     content.text(a.reason), a.failure, content.text(a.error),
                     a.based_on_version, a.superseded_count, a.added_count,
                     _json(a.superseded_ids), _json(a.added_ids), a.tokens_before,
                     a.tokens_after, time(a.at))
                    for a in changes.attempts
                ],
            )  # fmt: skip
        started = [s for t, s in changes.sessions.items() if t in changes.started]
        if started:
            c.executemany(
                f"INSERT INTO {tables.sessions} VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (s.session_id, s.transcript_id, s.source, s.model, s.parent_id,
                     content.json(s.metadata), time(s.started_at), time(s.last_event_at),
                     s.version, s.message_count, s.active_count, s.compactions_committed,
                     s.compactions_failed, s.quarantined,
                     None if s.erased_at is None else time(s.erased_at))
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
                    (time(s.last_event_at), s.version, s.message_count, s.active_count,
                     s.compactions_committed, s.compactions_failed, s.quarantined, s.session_id)
                    for s in updated
                ],
            )  # fmt: skip
        erased = [s for s in updated if s.transcript_id in changes.erased]
        if erased:
            c.executemany(
                f"UPDATE {tables.sessions} SET source = ?, model = ?, parent_id = NULL, "
                "metadata = ?, started_at = ?, erased_at = ? WHERE session_id = ?",
                [
                    (s.source, s.model, content.json(s.metadata), time(s.started_at),
                     time(s.erased_at), s.session_id)
                    for s in erased
                    if s.erased_at is not None
                ],
            )  # fmt: skip
        self._write_quarantine(c, tables, changes.quarantine)

    @staticmethod
    def _erase_rows(c: Cursor, tables: Tables, session_id: str, transcript_id: str) -> None:
        """Delete an erased session's rows from every view but `sessions`."""
        for table in (tables.active_messages, tables.message_history, tables.compaction_attempts):
            c.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
        c.execute(
            f"DELETE FROM {tables.quarantined_events} WHERE transcript_id = ?", (transcript_id,)
        )

    def _insert_active(self, c: Cursor, tables: Tables, rows: Sequence[ActiveRow]) -> None:
        if rows:
            seal = self.content.json
            c.executemany(
                f"INSERT INTO {tables.active_messages} VALUES (?,?,?,?,?)",
                [(a.session_id, a.position, a.message_id, a.role, seal(a.message)) for a in rows],
            )

    @staticmethod
    def _write_quarantine(c: Cursor, tables: Tables, rows: Sequence[QuarantineRow]) -> None:
        if rows:
            c.executemany(
                f"INSERT INTO {tables.quarantined_events} VALUES (?,?,?,?,?,?)",
                [
                    (q.position, q.transcript_id, q.session_id, q.version, q.topic, q.reason)
                    for q in rows
                ],
            )

    def _write_versions(self, c: Cursor) -> None:
        c.execute(f"DELETE FROM {VERSIONS_TABLE}")
        c.executemany(
            f"INSERT INTO {VERSIONS_TABLE} VALUES (?, ?)", list(self.projector.VERSIONS.items())
        )
