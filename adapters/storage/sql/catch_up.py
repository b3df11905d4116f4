"""Keeping view tables up to date with the log, exactly once.

A batch of log entries is projected (`Projector`) and written in one transaction together
with the tracked mark (the last entry's place in the log's order: `Dialect`), and re-offering
a tracked mark fails and rolls back: every entry is projected once, whoever projects it. An entry
the views cannot take is quarantined on its own, so the rest of its batch lands.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any
from uuid import UUID

from ....domain.transcript import Transcript
from ....projections.entries import LogEntry, segments
from ....projections.projector import Projector, ViewState
from ....projections.rows import ActiveRow, QuarantineRow, SessionRow, ViewChanges
from ....projections.views import Progress
from ..codec import OrjsonMapper
from .dialect import Cursor, Dialect, Mark
from .rows import UNREADABLE, DamagedRow, RowReader
from .schema import LIVE, NEXT, Tables
from .writing import ChangeWriter

TRACKING_NAME = "transcripts"  # the live views' tracked position
BATCH_SIZE = 1000
UNREADABLE_WAIT = 0.002  # seconds between looks for entries the log's order cannot take yet
POLL_INTERVAL = 0.2  # seconds between polls of the log head where the database cannot notify

Followed = Callable[[int], None]  # on_batch(events projected)
OrderKey = tuple[int, int]  # a `Mark` that sorts in the log's order (`order_key`)


@dataclass(frozen=True)
class SessionState:
    current: bool  # the views reflect the whole log
    transcript_id: str | None  # None: no such session
    erased_at: datetime | None
    quarantined: int  # events of the session the views could not take


@lru_cache(maxsize=4096)
def _uuid(text: str) -> UUID:
    return UUID(text)


def session_row(tables: Tables) -> str:
    """The statement reading a session's row by its transcript id."""
    return f"SELECT * FROM {tables.sessions} WHERE transcript_id = ?"


class _CursorState(ViewState):
    """What the projector reads, inside the transaction that will write its changes."""

    def __init__(self, rows: RowReader, cursor: Cursor, tables: Tables) -> None:
        self.rows = rows
        self.cursor = cursor
        self.tables = tables

    def load_session(self, transcript_id: str) -> SessionRow | None:
        self.cursor.execute(session_row(self.tables), (transcript_id,))
        row = self.cursor.fetchone()
        return self.rows.session(row) if row is not None else None

    def load_active(self, session_id: str) -> list[ActiveRow]:
        columns = self.rows.dialect.columns
        self.cursor.execute(
            columns.active_positions(self.tables, "h.session_id, h.message_id, h.role, h.message")
            + " ORDER BY h.position",
            (session_id, *columns.active_params(session_id)),
        )
        return [self.rows.active(row) for row in self.cursor.fetchall()]

    def load_rewound(self, session_id: str, message_id: str) -> int | None:
        self.cursor.execute(
            f"SELECT rewound_version FROM {self.tables.message_history} "
            "WHERE session_id = ? AND message_id = ?",
            (session_id, message_id),
        )
        row = self.cursor.fetchone()
        return None if row is None else row["rewound_version"]


class CatchUp:
    """Projects the log into view tables, a batch per transaction."""

    def __init__(
        self,
        dialect: Dialect,
        rows: RowReader,
        writer: ChangeWriter,
        mapper: OrjsonMapper,
        projector: type[Projector],
    ) -> None:
        self.dialect = dialect
        self.rows = rows
        self.writer = writer
        self.mapper = mapper
        self.projector = projector
        self._tracked = dialect.tracked_params(TRACKING_NAME)
        position, events = dialect.position, dialect.events_table
        after, order = dialect.after_tracked, dialect.log_order
        self._select = (  # the entries after the tracked mark that may be projected now
            f"SELECT {position} AS position, {dialect.mark_key} AS mark, originator_id, "
            f"originator_version, topic, state FROM {events} "
            f"WHERE {after} AND {dialect.readable} ORDER BY {order} LIMIT ?"
        )
        # Every entry after it, places only: a write's own, usually. Its LIMIT is a literal:
        # PostgreSQL prices a generic plan's `LIMIT $n` at a tenth of the log, so it planned
        # the statement anew at every write; one text per count of events (the same for
        # every append of one message) gets a generic plan, planned once.
        self._unprojected = (
            f"SELECT {position} AS position, {dialect.mark_key} AS mark, originator_id, "
            f"originator_version FROM {events} WHERE {after} ORDER BY {order} LIMIT {{:d}}"
        )
        self._head = f"SELECT MAX({position}) AS head FROM {events}"
        self._end = (  # the log's last entry, in its order
            f"SELECT {position} AS position, {dialect.mark_key} AS mark FROM {events} "
            f"ORDER BY {dialect.log_order_back} LIMIT 1"
        )
        current = dialect.reflects_log
        self._current = f"SELECT {current} AS current"  # one statement: one moment
        self._session_state = (
            f"SELECT {current} AS current, s.transcript_id, s.erased_at, s.quarantined "
            "FROM (SELECT 1 AS one) AS one LEFT JOIN sessions AS s ON s.session_id = ?"
        )
        readable = "s.transcript_id IS NOT NULL AND s.erased_at IS NULL AND s.quarantined = 0"
        self._session_active = (  # one trip, two columns: the state row, then the messages
            f"SELECT 0 AS position, {dialect.columns.json_array}({current}, {readable}) "
            "AS message FROM (SELECT 1 AS one) AS one LEFT JOIN sessions AS s "
            "ON s.session_id = ? UNION ALL "
            f"{dialect.columns.active_rows(LIVE, 'h.position, h.message')} ORDER BY position"
        )

    def head(self, c: Cursor) -> int:
        """The log's last position."""
        c.execute(self._head)
        return c.fetchone()["head"] or 0

    def end(self, c: Cursor) -> OrderKey:
        """Where the log ends, in its order ((0, 0): empty)."""
        c.execute(self._end)
        row = c.fetchone()
        return (0, 0) if row is None else order_key(entry_mark(row))

    def is_current(self, c: Cursor) -> bool:
        """Whether the live views reflect the whole log."""
        c.execute(self._current, self._tracked)
        return bool(c.fetchone()["current"])

    def session_state(self, c: Cursor, session_id: str) -> SessionState:
        """Whether the live views reflect the whole log, and what they hold of a session."""
        c.execute(self._session_state, (*self._tracked, session_id))
        try:
            return self._state(c.fetchone())
        except UNREADABLE as error:  # its erased_at
            raise DamagedRow("sessions", f"session {session_id!r}", error) from error

    def session_active(self, session_id: str) -> tuple[bool, list[tuple[int, Any]] | None]:
        """Whether the live views reflect the whole log, and the session's active messages
        as stored, (history position, message) rows, or None if it cannot be read as it is (missing,
        erased, quarantined: `session_state` says which), in one statement. Each row is one
        value apart from its position: a column more of 50 rows costs sqlite3 as much as
        the statement."""
        params = self.dialect.columns.active_params(session_id)
        state, *messages = self.dialect.read_tuples(
            self._session_active, (*self._tracked, session_id, *params)
        )
        current, readable = self.dialect.load_json(state[1])
        return bool(current), messages if readable else None

    def _state(self, row: Any) -> SessionState:
        erased = row["erased_at"]
        return SessionState(
            bool(row["current"]),
            row["transcript_id"],
            None if erased is None else self.dialect.load_time(erased),
            row["quarantined"] or 0,
        )

    def run(
        self,
        tables: Tables = LIVE,
        tracking_name: str = TRACKING_NAME,
        progress: Progress | None = None,
    ) -> int:
        """Project every entry `tables` have not seen, those the log holds at the call at
        least (waiting for the ones the log's order cannot take yet: see
        `Dialect.readable`); return how many."""
        done = 0
        with self.dialect.reading() as c:
            total = self.head(c) - self.dialect.tracked(c, tracking_name)
            end = self.end(c)
        while True:
            with self.dialect.writing(rebuilding=tables is NEXT) as c:
                count = self.batch(c, tables, tracking_name)
                reached = order_key(self.dialect.tracked_mark(c, tracking_name)) >= end
            if not count:
                if reached:
                    return done
                time.sleep(UNREADABLE_WAIT)
                continue
            done += count
            if progress is not None:
                progress(min(done, total), max(total, done))

    def next_batch(self) -> int:
        """Project the next batch of the log into the live views, in one transaction."""
        with self.dialect.writing() as c:
            return self.batch(c, LIVE, TRACKING_NAME)

    def batch(self, c: Cursor, tables: Tables, tracking_name: str) -> int:
        """Project the entries after the tracked position into `tables`; return how many."""
        c.execute(self._select, (*self.dialect.tracked_params(tracking_name), BATCH_SIZE))
        rows = c.fetchall()
        entries = [
            self.entry(
                row["position"],
                row["originator_id"],
                row["originator_version"],
                row["topic"],
                row["state"],
            )
            for row in rows
        ]
        if entries:
            self.project(c, tables, tracking_name, entries, entry_mark(rows[-1]))
        return len(entries)

    def project_own(self, c: Cursor, events: Sequence[Transcript.Event]) -> bool:
        """Project into the live views the events the transaction of `c` has just stored,
        as they are in hand (they are what their stored state decodes to), if they are all
        the log holds beyond the tracked mark; else project nothing, and return False if
        the views are behind the log (the caller may project what is before them). Where
        the log's order cannot take them in this transaction yet (PostgreSQL: a transaction
        older than it is writing the log, see `Dialect.own_turn`) nothing is projected either:
        the next read catches up."""
        if not events:
            return False
        own_turn = self.dialect.own_turn(c)
        c.execute(self._unprojected.format(len(events) + 1), self._tracked)
        rows = c.fetchall()
        if not own_turn():
            return True
        if len(rows) != len(events):
            return False
        names = {stream: stream.hex for stream in {event.originator_id for event in events}}
        entries = []
        for row, event in zip(rows, events, strict=True):
            name = row["originator_id"]
            name = name.hex if isinstance(name, UUID) else name
            version = row["originator_version"]
            if name != names[event.originator_id] or version != event.originator_version:
                return False
            entries.append(LogEntry(row["position"], name, version, event.TOPIC, event))
        self.project(c, LIVE, TRACKING_NAME, entries, entry_mark(rows[-1]))
        return True

    def project(
        self, c: Cursor, tables: Tables, tracking_name: str, entries: list[LogEntry], mark: Mark
    ) -> None:
        """Write what `entries` do to `tables`, and track `mark`, the last one's. An entry
        they cannot take is quarantined (by the next catch-up where errors are deferred)."""
        if self.dialect.defers_errors(c):
            for segment in segments(entries):
                self.writer.write(c, tables, self._projected(c, tables, segment))
            self.dialect.track(c, tracking_name, mark)
            return
        try:
            with self.dialect.pipelined(c):  # a round trip only where a result is read
                c.execute("SAVEPOINT batch")
                for segment in segments(entries):  # each written before the next is projected
                    self.writer.write(c, tables, self._projected(c, tables, segment))
                c.execute("RELEASE SAVEPOINT batch")
        except Exception as fault:
            _roll_back_to(c, "batch", fault)
            for entry in entries:  # one by one, to quarantine exactly the entries at fault
                self._project_alone(c, tables, entry)
            c.execute("RELEASE SAVEPOINT batch")
        self.dialect.track(c, tracking_name, mark)

    def entry(
        self, position: int, originator_id: Any, version: int, topic: str, state: Any
    ) -> LogEntry:
        """A stored event at its log position, decoded (or why it cannot be)."""
        # The transcript id as a backend stores it: hex text, or a UUID.
        name = originator_id.hex if isinstance(originator_id, UUID) else str(originator_id)
        try:
            stream, payload = _uuid(name), bytes(state)
        except (TypeError, ValueError) as fault:
            return LogEntry(
                position, name, version, topic, undecodable=f"bad originator id: {fault}"
            )
        try:
            event = self.mapper.decode(stream, version, topic, payload)
        except Exception as fault:
            reason = f"{type(fault).__name__}: {fault}"
            return LogEntry(position, name, version, topic, undecodable=reason)
        return LogEntry(position, name, version, topic, event)

    def poll(
        self,
        stop: threading.Event,
        on_batch: Followed | None,
        keep_warm: Callable[[], int],
    ) -> int:
        """Project new entries until `stop` is set, polling the log head (a read) where the
        database cannot notify; while the views are current, `keep_warm` (the search
        index's catch-up); return how many entries were projected."""
        done = 0
        while not stop.is_set():
            with self.dialect.reading() as c:
                behind = not self.is_current(c)
            if not behind:
                if not keep_warm():
                    stop.wait(POLL_INTERVAL)
                continue
            count = self.next_batch()
            done += count
            if count and on_batch is not None:
                on_batch(count)
        return done

    def _projected(self, c: Cursor, tables: Tables, entries: list[LogEntry]) -> ViewChanges:
        return self.projector(_CursorState(self.rows, c, tables)).project(entries)

    def _project_alone(self, c: Cursor, tables: Tables, entry: LogEntry) -> None:
        c.execute("SAVEPOINT entry")
        try:
            self.writer.write(c, tables, self._projected(c, tables, [entry]))
        except Exception as fault:
            _roll_back_to(c, "entry", fault)
            reason = f"the views could not take it: {type(fault).__name__}: {fault}"
            c.execute(  # its id only: the row itself may be what cannot be read
                f"SELECT session_id FROM {tables.sessions} WHERE transcript_id = ?",
                (entry.transcript_id,),
            )
            session = c.fetchone()
            session_id = None if session is None else session["session_id"]
            self.writer.quarantine(
                c,
                tables,
                [
                    QuarantineRow(
                        entry.position,
                        entry.transcript_id,
                        session_id,
                        entry.version,
                        entry.topic,
                        reason,
                    )
                ],
            )
            if session_id is not None:
                c.execute(
                    f"UPDATE {tables.sessions} SET quarantined = quarantined + 1 "
                    "WHERE session_id = ?",
                    (session_id,),
                )
        c.execute("RELEASE SAVEPOINT entry")


def entry_mark(row: Any) -> Mark:
    """The mark of an entry read from the log."""
    key = row["mark"]
    return (None if key is None else int(key)), row["position"]


def order_key(mark: Mark) -> OrderKey:
    """A mark as a key that sorts in the log's order."""
    return mark[0] or 0, mark[1]


def _roll_back_to(c: Cursor, savepoint: str, fault: Exception) -> None:
    """Roll back to `savepoint`; if the database ended the whole transaction on `fault` (as
    SQLite does on a full disk or an I/O error), raise `fault`: it is storage trouble, for
    the caller, not an entry the views could not take."""
    try:
        c.execute(f"ROLLBACK TO SAVEPOINT {savepoint}")
    except Exception:
        raise fault from None
