"""What the store hands back: compaction attempts and results, erasures, and the entries of
its queries."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..domain.transcript import Transcript
from ..projections.rows import AttemptRow, HistoryRow


@dataclass(frozen=True)
class CompactionAttempt:
    """A compaction in progress: the active snapshot it is computed against.

    Pass it back to `commit_compaction` or `fail_compaction` of the store that began it.
    """

    id: str
    session_id: str
    version: int
    messages: list[dict[str, Any]]
    store_token: object = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class CompactionResult:
    """How an attempt ended. `messages` is the active list as stored: adopt it. `version`:
    the session's version once the commit or the failure was stored (None if nothing could
    be recorded)."""

    committed: bool
    compaction_id: str
    messages: list[dict[str, Any]]
    failure: str | None = None
    error: str | None = None
    version: int | None = None


@dataclass(frozen=True)
class Erasure:
    """What `forget` erased: the counts its tombstone records, and when.

    `already_erased`: an earlier call erased the session; this one changed nothing (it only
    cleaned the store's files again).
    """

    session_id: str
    started_at: datetime
    erased_at: datetime
    messages: int
    compactions_committed: int
    compactions_failed: int
    events: int  # events deleted
    already_erased: bool = False

    @classmethod
    def of(cls, tombstone: Transcript.Erased, *, already_erased: bool) -> Erasure:
        """What a session's tombstone records."""
        return cls(
            session_id=tombstone.session_id,
            started_at=tombstone.started_at,
            erased_at=tombstone.timestamp,
            messages=tombstone.messages,
            compactions_committed=tombstone.compactions_committed,
            compactions_failed=tombstone.compactions_failed,
            events=tombstone.originator_version - 1,
            already_erased=already_erased,
        )


# -- the entries queries return ---------------------------------------------------------------

_EVENT_HEADER = frozenset({"originator_id", "originator_version", "timestamp", "originator_topic"})


def history_entry(row: HistoryRow) -> dict[str, Any]:
    """An entry of `TranscriptStore.history()`."""
    return {
        "id": row.message_id,
        "active": row.active,
        "superseded_by": row.superseded_by,
        "added_by": row.added_by,
        "rewound": row.rewound_version is not None,
        "message": row.message,
    }


def event_entry(event: Transcript.Event) -> dict[str, Any]:
    """An entry of `TranscriptStore.events()`: the event's version, type, time and data."""
    return {
        "version": event.originator_version,
        "type": type(event).__name__,
        "at": event.timestamp,
        "data": {key: value for key, value in vars(event).items() if key not in _EVENT_HEADER},
    }


def explanation(
    row: HistoryRow,
    adding: AttemptRow | None,
    superseding: AttemptRow | None,
    position: int | None,
    rewinding: Transcript.Rewound | None,
    restoring: Transcript.MessageAppended | None,
) -> dict[str, Any]:
    """What `TranscriptStore.explain()` says of a message: who added it (its append, or the
    compaction whose summary it is), where it is in the context, who superseded it, which
    rewind holds it out of the context and which append last restored it."""
    return {
        "session_id": row.session_id,
        "message_id": row.message_id,
        "role": row.role,
        "added": {
            "event": "CompactionCommitted" if adding else "MessageAppended",
            "version": row.appended_version,
            "at": row.appended_at,
            "compaction_id": row.added_by,
            "reason": adding.reason if adding else None,
        },
        "active": row.active,
        "position": position,
        "superseded": None
        if superseding is None
        else {
            "compaction_id": superseding.compaction_id,
            "version": superseding.version,
            "at": superseding.at,
            "reason": superseding.reason,
        },
        "rewound": None if rewinding is None else _by(rewinding, reason=rewinding.reason),
        "restored": None if restoring is None else _by(restoring),
        "message": row.message,
    }


def _by(event: Transcript.Event, **more: Any) -> dict[str, Any]:
    """The event that did something to a message: its type, version and time (and `more`)."""
    return {
        "event": type(event).__name__,
        "version": event.originator_version,
        "at": event.timestamp,
        **more,
    }
