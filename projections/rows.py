"""Rows of the read models, as the projection produces them and the views store them.

The public schema (same table and column names on every SQL backend):
- `active_messages`: session_id, position, message_id, role, message (an SQL view: the
  `message_history` rows that have a position, so a message's content is stored once)
- `message_history`: session_id, seq, message_id, role, message, active, superseded_by,
  added_by, appended_at, appended_version, rewound_version, restored_version, position
  (the row's place in the session's order, never reused: NULL while rewound or never active;
  a superseded row keeps the one it had; an active row's is its `active_messages` position
  plus the session's `position_base`), log_position (of the event that added the row: never
  reused, the full-text index's high-water mark)
- `compaction_attempts`: compaction_id, session_id, version, status, reason, failure, error,
  based_on_version, superseded_count, added_count, superseded_ids, added_ids,
  tokens_before, tokens_after, at, metadata
- `sessions`: session_id, transcript_id, source, model, parent_id, metadata, started_at,
  last_event_at, version, message_count, active_count, compactions_committed,
  compactions_failed, quarantined, erased_at, rewound_count, state, context_version (the
  version of the last compaction, rewind or restore: what a reader of the active context a
  page at a time checks), position_base (the `message_history` positions up to it are not
  active: an active row's `active_messages` position is its own minus this)
- `quarantined_events`: position, transcript_id, session_id, version, topic, reason
`message` columns hold the message as JSON, with its `id`. A rewound message is not active,
and its `rewound_version` is the version of the `Rewound` event that took it out (NULL while
it is active or superseded); `restored_version` is the version of the `MessageAppended` that
last restored it (NULL if it never was).

An erased session (`forget`) keeps its `sessions` row: `erased_at` is when it was erased
(NULL for every other session), source, model and started_at stay, parent_id is NULL,
metadata and state `{}`, every count 0, version and last_event_at are its tombstone's. It has
no row in the other views. `state` is the session's state (`StateChanged` events).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..domain.messages import Message

VIEW_NAMES = ("active_messages", "message_history", "compaction_attempts", "sessions")


@dataclass(frozen=True)
class ActiveRow:
    session_id: str
    position: int
    message_id: str
    role: str
    message: Message  # with its "id"


@dataclass
class HistoryRow:
    session_id: str
    seq: int
    message_id: str
    role: str
    message: Message  # with its "id"
    active: bool
    superseded_by: str | None
    added_by: str | None
    appended_at: datetime
    appended_version: int
    rewound_version: int | None = None
    restored_version: int | None = None
    log_position: int = 0  # of the event that added the row


@dataclass(frozen=True)
class HistoryMark:
    """What a batch did to a stored history row by rewinding or restoring its message."""

    active: bool
    rewound_version: int | None
    restored_version: int | None  # None: as stored


@dataclass(frozen=True)
class AttemptRow:
    compaction_id: str
    session_id: str
    version: int
    status: str
    reason: str
    failure: str | None
    error: str | None
    based_on_version: int
    superseded_ids: list[str]
    added_ids: list[str]
    superseded_count: int
    added_count: int
    tokens_before: int | None
    tokens_after: int | None
    at: datetime
    metadata: dict[str, Any] | None = None  # a commit's, as its caller gave it

    def as_audit_entry(self) -> dict[str, Any]:
        """The entry `TranscriptStore.compactions()` returns."""
        return {
            "id": self.compaction_id,
            "status": self.status,
            "reason": self.reason,
            "failure": self.failure,
            "error": self.error,
            "superseded": list(self.superseded_ids),
            "added": list(self.added_ids),
            "based_on_version": self.based_on_version,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "at": self.at,
            "version": self.version,
            "metadata": self.metadata,
        }


@dataclass
class SessionRow:
    session_id: str
    transcript_id: str
    source: str
    model: str | None
    parent_id: str | None
    metadata: dict[str, Any]
    started_at: datetime
    last_event_at: datetime
    version: int = 1
    message_count: int = 0
    active_count: int = 0
    compactions_committed: int = 0
    compactions_failed: int = 0
    quarantined: int = 0
    erased_at: datetime | None = None
    rewound_count: int = 0  # messages out of the context by a rewind (not superseded)
    state: dict[str, Any] = field(default_factory=dict)
    # The version of the last event that changed the active context otherwise than by
    # appending a new message: a compaction, a rewind, a restore (0: none).
    context_version: int = 0
    # The history positions up to it are out of the active context: a committed compaction
    # leaves the rows it supersedes where they are and moves the context above them (the
    # views move it, as they make its `Supersession`: a batch's rows are above it as read).
    position_base: int = 0

    def as_summary(self) -> dict[str, Any]:
        """The entry `TranscriptStore.sessions()` returns."""
        return {
            "id": self.session_id,
            "source": self.source,
            "model": self.model,
            "parent_id": self.parent_id,
            "metadata": self.metadata,
            "started_at": self.started_at,
            "last_event_at": self.last_event_at,
            "version": self.version,
            "messages": self.message_count,
            "active": self.active_count,
            "compactions_committed": self.compactions_committed,
            "compactions_failed": self.compactions_failed,
            "quarantined": self.quarantined,
            "erased_at": self.erased_at,
            "rewound": self.rewound_count,
            "state": self.state,
        }


@dataclass(frozen=True)
class QuarantineRow:
    position: int
    transcript_id: str
    session_id: str | None
    version: int
    topic: str
    reason: str


@dataclass(frozen=True)
class Supersession:
    """A committed compaction's change to a session's active list, made where the rows are:
    its first `replaced` active messages leave it, and their history rows are marked
    superseded by the compaction (and listed in its audit row), but the `kept` ones, which
    move to their new positions; the `added` rows take theirs; the rest follows them."""

    session_id: str
    compaction_id: str
    replaced: int
    kept: list[tuple[str, int]]  # (message id, new position)
    added: list[ActiveRow]
    length: int  # of the replacement: the rest moves up to follow it
    base: int  # the session's position base before: its active rows were above it
    next_base: int  # after: above every history position the session had (never reused)


@dataclass
class ViewChanges:
    """Everything one batch of events does to the views, ready to be written at once."""

    sessions: dict[str, SessionRow] = field(default_factory=dict)  # by transcript id
    started: set[str] = field(default_factory=set)  # transcript ids whose sessions row is new
    states: set[str] = field(default_factory=set)  # transcript ids whose state changed
    erased: set[str] = field(default_factory=set)  # transcript ids whose other rows go
    history_inserts: dict[tuple[str, str], HistoryRow] = field(default_factory=dict)
    marks: dict[tuple[str, str], HistoryMark] = field(default_factory=dict)  # by session, msg
    active_appends: list[ActiveRow] = field(default_factory=list)
    active_rewrites: dict[str, list[ActiveRow]] = field(default_factory=dict)  # by session
    attempts: list[AttemptRow] = field(default_factory=list)
    quarantine: list[QuarantineRow] = field(default_factory=list)
    supersession: Supersession | None = None  # written last: it ends its batch's segment
