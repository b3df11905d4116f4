"""What each event does to each view: the projection logic, with no SQL.

`Projector.project(entries)` turns a segment of log entries (a batch cut after each
committed compaction: `segments`) into one `ViewChanges` that the views write, in the
batch's transaction with the tracked log position. It reads the current state of the
sessions it touches through a `ViewState` (the stored views), and keeps what the segment
changed in memory, so a batch of appends costs a few bulk inserts. A committed compaction is
a `Supersession` the views make where the rows are (its cost does not grow with what it
supersedes), leaving the superseded rows where they are: the context moves above them.

An entry that cannot be decoded or applied (unknown topic, corrupt payload, an event for a
session that was never started, a compaction of messages that are not active) does not stop
the batch: it is quarantined, and its session flagged.

A `Rewound` event takes messages out of `active_messages` and marks their history rows; a
`MessageAppended` of a rewound id restores its row (it keeps its place in the history) and
appends it to the active list. Whether an appended id is a rewound one is asked of the stored
views only when its session has rewound messages (`sessions.rewound_count`). A state change
sets keys of the `sessions` row's `state`.

An `Erased` tombstone removes the session's rows from every view but `sessions`, whose row
stays with what the tombstone records and `erased_at`. It may be the first event of its
session the views see: the erasure deleted the earlier ones, projected or not.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import ClassVar

from ..domain.messages import with_id
from ..domain.state import changed_state
from ..domain.transcript import Transcript
from .entries import LogEntry
from .fold import COMMITTED, FAILED
from .rows import (
    ActiveRow,
    AttemptRow,
    HistoryMark,
    HistoryRow,
    QuarantineRow,
    SessionRow,
    Supersession,
    ViewChanges,
)


class ViewState(ABC):
    """Read access to the stored views, for what a batch needs to know before it changes them."""

    @abstractmethod
    def load_session(self, transcript_id: str) -> SessionRow | None:
        """The sessions row of a transcript, if it has one."""

    @abstractmethod
    def load_active(self, session_id: str) -> list[ActiveRow]:
        """The active_messages rows of a session, in position order."""

    @abstractmethod
    def load_rewound(self, session_id: str, message_id: str) -> int | None:
        """The rewound_version of a message's stored history row (None: none, or no row)."""


class Unprojectable(Exception):
    """An event the views cannot take; it is quarantined."""


@dataclass
class _Session:
    row: SessionRow
    active: list[ActiveRow] | None = None  # loaded when a compaction rewrites the list
    appended: list[ActiveRow] = field(default_factory=list)
    started: bool = False  # by this batch: its sessions row is new


class Projector:
    """Projects Transcript events into the views. Bump a view's version to rebuild it."""

    VERSIONS: ClassVar[dict[str, int]] = {
        # 2: the views write the search index, ids hashed on PostgreSQL, every event rebuilt
        # once (none an older release quarantined stays out); 3: a view; 4: position_base
        "active_messages": 4,
        "message_history": 8,  # 3 rewound/restored, 4 position, 5 log_position, 6 no FTS5
        # text copy, 7 positions kept, 8 no key of log positions (SQLite)
        "compaction_attempts": 5,  # 3, 5: Compaction{Committed,Failed} 2 (older fail); 4: metadata
        "sessions": 8,  # 2 erased_at, 3 others' 2, 4 rewound_n, 5 state, 6 context, 7 base, 8 mark
    }

    def __init__(self, state: ViewState) -> None:
        self.state = state

    def project(self, entries: Iterable[LogEntry]) -> ViewChanges:
        """What one segment of entries (see `segments`) does to the views."""
        self.changes = ViewChanges()
        self._sessions: dict[str, _Session | None] = {}
        for entry in entries:
            if self.changes.supersession is not None:
                raise ValueError("a committed compaction ends a segment: see segments()")
            self._position = entry.position
            try:
                self._project(entry)
            except Unprojectable as problem:
                self._quarantine(entry, str(problem))
            except (KeyError, TypeError, ValueError, AttributeError) as problem:
                self._quarantine(entry, f"malformed event: {type(problem).__name__}: {problem}")
        for session in self._sessions.values():
            if session is None:
                continue
            self.changes.sessions[session.row.transcript_id] = session.row
            if session.started:
                self.changes.started.add(session.row.transcript_id)
            if session.active is not None:
                self.changes.active_rewrites[session.row.session_id] = [
                    replace(row, position=at) for at, row in enumerate(session.active, 1)
                ]
            else:
                self.changes.active_appends.extend(session.appended)
        return self.changes

    def _project(self, entry: LogEntry) -> None:
        event = entry.event
        if event is None:
            raise Unprojectable(entry.undecodable or "the event could not be decoded")
        if isinstance(event, Transcript.Started):
            self._started(entry, event)
            return
        if isinstance(event, Transcript.Erased):
            self._erased(entry, event)
            return
        session = self._session(entry.transcript_id)
        if session is None:
            raise Unprojectable("an event of a session that has no Started event")
        if session.row.erased_at is not None:
            raise Unprojectable("an event of an erased session")
        if isinstance(event, Transcript.MessageAppended):
            self._appended(session, event)
        elif isinstance(event, Transcript.Rewound):
            self._rewound(session, event)
        elif isinstance(event, Transcript.CompactionCommitted):
            self._committed(session, event)
        elif isinstance(event, Transcript.CompactionFailed):
            self._failed(session, event)
        elif isinstance(event, Transcript.StateChanged):
            self._state_changed(session, event)
        else:
            raise Unprojectable(f"no projection for events of type {type(event).__name__}")
        session.row.version = event.originator_version
        session.row.last_event_at = event.timestamp

    # -- event handlers: check first, then change (a raise must leave the batch untouched) -

    def _started(self, entry: LogEntry, event: Transcript.Started) -> None:
        _check_session_id(event.session_id)
        if self._session(entry.transcript_id) is not None:
            raise Unprojectable("a second Started event for one session")
        row = SessionRow(
            session_id=event.session_id,
            transcript_id=entry.transcript_id,
            source=event.source,
            model=event.model,
            parent_id=event.parent_id,
            metadata=event.metadata,
            started_at=event.timestamp,
            last_event_at=event.timestamp,
            version=event.originator_version,
        )
        self._sessions[entry.transcript_id] = _Session(row, started=True)

    def _erased(self, entry: LogEntry, event: Transcript.Erased) -> None:
        _check_session_id(event.session_id)
        session = self._session(entry.transcript_id)
        if session is not None and session.row.erased_at is not None:
            raise Unprojectable("a second Erased event for one session")
        row = SessionRow(
            session_id=event.session_id,
            transcript_id=entry.transcript_id,
            source=event.source,
            model=event.model,
            parent_id=None,
            metadata={},
            started_at=event.started_at,
            last_event_at=event.timestamp,
            version=event.originator_version,
            erased_at=event.timestamp,
        )
        if session is None:
            self._sessions[entry.transcript_id] = _Session(row, started=True)
        else:
            self._drop_pending(row.session_id, entry.transcript_id)
            session.row, session.active, session.appended = row, None, []
        self.changes.erased.add(entry.transcript_id)

    def _drop_pending(self, session_id: str, transcript_id: str) -> None:
        """Forget what this batch was about to write for an erased session."""
        changes = self.changes
        changes.history_inserts = {
            key: row for key, row in changes.history_inserts.items() if key[0] != session_id
        }
        changes.marks = {key: m for key, m in changes.marks.items() if key[0] != session_id}
        changes.attempts = [a for a in changes.attempts if a.session_id != session_id]
        changes.quarantine = [q for q in changes.quarantine if q.transcript_id != transcript_id]

    def _appended(self, session: _Session, event: Transcript.MessageAppended) -> None:
        row = session.row
        message = with_id(event.message_id, event.message)
        active = ActiveRow(
            row.session_id, row.active_count + 1, event.message_id, message["role"], message
        )
        if self._is_rewound(row, event):  # a restore: its history row stays
            self._mark(row.session_id, event.message_id, None, event.originator_version)
            row.rewound_count -= 1
            row.context_version = event.originator_version
        elif (row.session_id, event.message_id) in self.changes.history_inserts:
            raise Unprojectable(f"a second MessageAppended of message {event.message_id!r}")
        else:
            self._add_history(row, message, event, added_by=None)
        (session.active if session.active is not None else session.appended).append(active)
        row.active_count += 1

    def _rewound(self, session: _Session, event: Transcript.Rewound) -> None:
        row = session.row
        if event.originator_version <= row.version:  # offered again: the views hold it
            raise Unprojectable("a rewind the views have taken already")
        current = self._active(session)
        gone = set(event.message_ids)
        if len(gone) != len(event.message_ids) or not gone <= {a.message_id for a in current}:
            raise Unprojectable(f"a rewind of messages that are not active: {event.message_ids}")
        for message_id in event.message_ids:
            self._mark(row.session_id, message_id, event.originator_version, None)
        session.active = [active for active in current if active.message_id not in gone]
        row.active_count = len(session.active)
        row.rewound_count += len(gone)
        row.context_version = event.originator_version

    def _committed(self, session: _Session, event: Transcript.CompactionCommitted) -> None:
        """Made where the rows are (`Supersession`): the replaced rows are not read."""
        row = session.row
        kept = set(event.kept)
        added = {new["id"]: with_id(new["id"], new["message"]) for new in event.added}
        if not len(kept) == len(event.kept) <= event.replaced <= row.active_count:
            raise Unprojectable(
                f"compaction of messages that are not active: it replaces {event.replaced} "
                f"of {row.active_count} active messages, keeping {len(event.kept)}"
            )
        order = event.order
        if len(order) != len(kept) + len(added) or set(order) != kept | added.keys():
            raise Unprojectable("compaction order names messages it neither keeps nor adds")
        positions = {message_id: position for position, message_id in enumerate(order, 1)}
        rows = [  # each added message read whole before anything changes
            ActiveRow(row.session_id, positions[i], i, message["role"], message)
            for i, message in added.items()
        ]
        attempt = self._attempt(row, event, COMMITTED, None, None, [], list(added))
        if any((row.session_id, i) in self.changes.history_inserts for i in added):
            raise Unprojectable("a compaction adding a message id stored already")
        for message in added.values():
            self._add_history(row, message, event, added_by=event.compaction_id)
        superseded = event.replaced - len(kept)
        self.changes.supersession = Supersession(
            session_id=row.session_id,
            compaction_id=event.compaction_id,
            replaced=event.replaced,
            kept=[(message_id, positions[message_id]) for message_id in event.kept],
            added=rows,
            length=len(order),
            base=row.position_base,  # the views move it above every position of the session:
            next_base=row.position_base + row.active_count,  # positions are never reused
        )
        row.active_count += len(order) - event.replaced
        row.compactions_committed += 1
        row.context_version = event.originator_version
        self.changes.attempts.append(replace(attempt, superseded_count=superseded))

    def _failed(self, session: _Session, event: Transcript.CompactionFailed) -> None:
        row, superseded = session.row, event.would_supersede
        attempt = self._attempt(row, event, FAILED, event.failure, event.error, superseded, [])
        row.compactions_failed += 1
        self.changes.attempts.append(attempt)

    def _state_changed(self, session: _Session, event: Transcript.StateChanged) -> None:
        session.row.state = changed_state(session.row.state, event.values, event.removed)
        self.changes.states.add(session.row.transcript_id)

    # -- helpers -------------------------------------------------------------------------

    def _session(self, transcript_id: str) -> _Session | None:
        if transcript_id not in self._sessions:
            row = self.state.load_session(transcript_id)
            self._sessions[transcript_id] = _Session(row) if row is not None else None
        return self._sessions[transcript_id]

    def _active(self, session: _Session) -> list[ActiveRow]:
        if session.active is None:
            session.active = self.state.load_active(session.row.session_id) + session.appended
            session.appended = []
        return session.active

    def _add_history(
        self, row: SessionRow, message: dict, event: Transcript.Event, added_by: str | None
    ) -> None:
        history = HistoryRow(
            session_id=row.session_id,
            seq=row.message_count + 1,
            message_id=message["id"],
            role=message["role"],
            message=message,
            active=True,
            superseded_by=None,
            added_by=added_by,
            appended_at=event.timestamp,
            appended_version=event.originator_version,
            log_position=self._position,
        )
        self.changes.history_inserts[(row.session_id, message["id"])] = history
        row.message_count += 1

    def _is_rewound(self, row: SessionRow, event: Transcript.MessageAppended) -> bool:
        """Whether the appended message is rewound (by a rewind before it: an append the
        views took already, offered again, is no restore), as this batch left it so far."""
        if not row.rewound_count:
            return False
        key = (row.session_id, event.message_id)
        known = self.changes.history_inserts.get(key) or self.changes.marks.get(key)
        if known is not None:
            return known.rewound_version is not None
        rewound = self.state.load_rewound(row.session_id, event.message_id)
        return rewound is not None and rewound < event.originator_version

    def _mark(
        self, session_id: str, message_id: str, rewound: int | None, restored: int | None
    ) -> None:
        """Rewind (`rewound`: the version) or restore (`restored`: the version) a message's
        history row: the pending one of this batch, else the stored one."""
        key = (session_id, message_id)
        earlier = self.changes.history_inserts.get(key) or self.changes.marks.get(key)
        if restored is None and earlier is not None:
            restored = earlier.restored_version
        pending = self.changes.history_inserts.get(key)
        if pending is not None:
            pending.active, pending.rewound_version = rewound is None, rewound
            pending.restored_version = restored
        else:
            self.changes.marks[key] = HistoryMark(rewound is None, rewound, restored)

    @staticmethod
    def _attempt(
        row: SessionRow,
        event: Transcript.CompactionCommitted | Transcript.CompactionFailed,
        status: str,
        failure: str | None,
        error: str | None,
        superseded: list[str],
        added: list[str],
    ) -> AttemptRow:
        return AttemptRow(
            compaction_id=event.compaction_id,
            session_id=row.session_id,
            version=event.originator_version,
            status=status,
            reason=event.reason,
            failure=failure,
            error=error,
            based_on_version=event.based_on_version,
            superseded_ids=list(superseded),
            added_ids=added,
            superseded_count=len(superseded),
            added_count=len(added),
            tokens_before=event.tokens_before,
            tokens_after=event.tokens_after,
            at=event.timestamp,
            metadata=getattr(event, "metadata", None),  # a failure has none
        )

    def _quarantine(self, entry: LogEntry, reason: str) -> None:
        session = self._session_or_none(entry.transcript_id)
        if session is not None:
            session.row.quarantined += 1
        self.changes.quarantine.append(
            QuarantineRow(
                position=entry.position,
                transcript_id=entry.transcript_id,
                session_id=session.row.session_id if session is not None else None,
                version=entry.version,
                topic=entry.topic,
                reason=reason,
            )
        )

    def _session_or_none(self, transcript_id: str) -> _Session | None:
        try:
            return self._session(transcript_id)
        except Exception:  # the views may be what is broken; quarantining must not fail
            return None


def _check_session_id(session_id: object) -> None:
    if not isinstance(session_id, str) or not session_id:
        raise Unprojectable(f"a session id that is no non-empty string: {session_id!r}")
