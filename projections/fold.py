"""A pure fold of one transcript's events into what users read.

Given the events of a session in order, `SessionFold` computes the active context, the full
history with its supersession and rewind marks, and the compaction audit. It is the reference
semantics of every view: the store reads it directly, and the SQL read models are checked
against it. A `Rewound` event takes active messages out of the context (they stay in the
history, marked); a `MessageAppended` of a rewound id restores it; a `StateChanged` sets and
removes keys of the session's `state`. An `Erased` tombstone
leaves only what it records (and `erased_at`); an event after it cannot be applied.

A fold given a `digest` keeps of each message (with its id) only its role and digest, not
its content, in columns (`HistoryColumns`), and of each compaction's ids their count and
digest (`KeptIds`): what verifying a long session compares, in memory small per message (its
`active()` and `history()` cannot be said).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..domain.committed import superseded_ids
from ..domain.messages import Message, with_id
from ..domain.state import changed_state
from ..domain.transcript import Transcript
from .history_columns import ColumnEntry, HistoryColumns

COMMITTED = "committed"
FAILED = "failed"


def _shared(role: Any) -> Any:
    """A role as one object for every message of it (a long history holds many)."""
    return sys.intern(role) if isinstance(role, str) else role


@dataclass(slots=True)
class HistoryEntry:
    id: str
    role: str
    message: Message | None  # None in a fold that keeps digests
    digest: bytes | None  # of the message with its id, in a fold that keeps digests
    appended_at: datetime
    appended_version: int
    active: bool = True
    superseded_by: str | None = None
    added_by: str | None = None
    rewound_version: int | None = None
    restored_version: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "active": self.active,
            "superseded_by": self.superseded_by,
            "added_by": self.added_by,
            "rewound": self.rewound_version is not None,
            "message": with_id(self.id, self.contents()),
        }

    def contents(self) -> Message:
        if self.message is None:
            raise ValueError(f"a fold of digests has no content of message {self.id!r}")
        return self.message


@dataclass(frozen=True)
class KeptIds:
    """A list of message ids as a fold that keeps digests keeps it: how many, and a digest."""

    count: int
    digest: bytes

    def __len__(self) -> int:
        return self.count

    def __repr__(self) -> str:
        return f"{self.count} id(s), digest {self.digest.hex()}"


@dataclass
class SessionFold:
    session_id: str = ""
    source: str = ""
    model: str | None = None
    parent_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    started_at: datetime | None = None
    last_event_at: datetime | None = None
    version: int = 0
    entries: dict[str, HistoryEntry] | HistoryColumns = field(init=False)  # in storage order
    active_ids: list[str] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    erased_at: datetime | None = None
    context_version: int = 0  # of the last compaction, rewind or restore
    # What is kept of each message with its id, instead of the message itself (None: itself)
    digest: Callable[[Any], bytes] | None = None

    def __post_init__(self) -> None:
        self.entries = self._no_entries()

    def _no_entries(self) -> dict[str, HistoryEntry] | HistoryColumns:
        return HistoryColumns() if self.digest else {}

    @classmethod
    def of(cls, events: Iterable[Transcript.Event]) -> SessionFold:
        fold = cls()
        for event in events:
            fold.apply(event)
        return fold

    @classmethod
    def of_readable(cls, events: Iterable[Transcript.Event]) -> SessionFold:
        """The fold of the events that can be applied; the others are left out."""
        fold = cls()
        for event in events:
            fold.apply_readable(event)
        return fold

    def apply_readable(self, event: Transcript.Event) -> None:
        """`apply` the event if it can be applied; else leave it out."""
        try:
            self.apply(event)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass

    def apply(self, event: Transcript.Event) -> None:
        if self.erased_at is not None:
            raise ValueError("an event of an erased session")
        if isinstance(event, Transcript.Erased):
            self._erase(event)
        elif isinstance(event, Transcript.Started):
            self.session_id = event.session_id
            self.source = event.source
            self.model = event.model
            self.parent_id = event.parent_id
            self.metadata = event.metadata
            self.started_at = event.timestamp
        elif isinstance(event, Transcript.MessageAppended):
            self._append(event)
        elif isinstance(event, Transcript.Rewound):
            self._rewind(event)
        elif isinstance(event, Transcript.CompactionCommitted):
            self._commit(event)
        elif isinstance(event, Transcript.StateChanged):
            self.state = changed_state(self.state, event.values, event.removed)
        elif isinstance(event, Transcript.CompactionFailed):
            self.compactions.append(
                self._audit_entry(event, FAILED, event.would_supersede, [])
                | {"failure": event.failure, "error": event.error}
            )
        else:
            raise TypeError(f"no fold for events of type {type(event).__name__}")
        self.version = event.originator_version
        self.last_event_at = event.timestamp

    def _erase(self, event: Transcript.Erased) -> None:
        self.session_id = event.session_id
        self.source = event.source
        self.model = event.model
        self.parent_id = None
        self.metadata = {}
        self.state = {}
        self.started_at = event.started_at
        self.entries = self._no_entries()
        self.active_ids = []
        self.compactions = []
        self.erased_at = event.timestamp
        self.context_version = 0

    @staticmethod
    def _check(message_id: str, message: object) -> None:
        """A damaged event's message (the views quarantine it too): not an object, no role."""
        if not isinstance(message, dict):
            raise TypeError(f"message {message_id!r} is not a JSON object")
        if "role" not in message:
            raise KeyError(f"message {message_id!r} has no role")

    def _add(
        self, message_id: str, message: Message, event: Transcript.Event, added_by: str | None
    ) -> None:
        self._check(message_id, message)
        self.entries[message_id] = HistoryEntry(
            message_id,
            _shared(message["role"]),
            None if self.digest else message,
            self.digest(with_id(message_id, message)) if self.digest else None,
            event.timestamp,
            event.originator_version,
            added_by=added_by,
        )

    def _append(self, event: Transcript.MessageAppended) -> None:
        entry = self.entries.get(event.message_id)
        if entry is None:
            self._add(event.message_id, event.message, event, added_by=None)
        elif entry.rewound_version is not None:  # a restore
            entry.active, entry.rewound_version = True, None
            entry.restored_version = event.originator_version
            self.context_version = event.originator_version
        else:
            raise ValueError(f"a second MessageAppended of message {event.message_id!r}")
        self.active_ids.append(event.message_id)

    def _rewind(self, event: Transcript.Rewound) -> None:
        gone = set(event.message_ids)
        if len(gone) != len(event.message_ids) or not gone <= set(self.active_ids):
            raise ValueError(f"a rewind of messages that are not active: {event.message_ids}")
        entries = [self.entries[message_id] for message_id in event.message_ids]
        self.active_ids = [i for i in self.active_ids if i not in gone]
        for entry in entries:
            entry.active, entry.rewound_version = False, event.originator_version
        self.context_version = event.originator_version

    def _commit(self, event: Transcript.CompactionCommitted) -> None:
        """Checked whole before anything changes, as the views check it."""
        superseded = superseded_ids(self.active_ids, event.replaced, event.kept)
        entries = [self.entries[message_id] for message_id in superseded]
        added_ids = [new["id"] for new in event.added]
        for new in event.added:
            self._check(new["id"], new["message"])
        if any(added_id in self.entries for added_id in added_ids):
            raise ValueError("a compaction adding a message id stored already")
        order = list(event.order)
        named = {*event.kept, *added_ids}
        if len(order) != len(event.kept) + len(added_ids) or set(order) != named:
            raise ValueError("compaction order names messages it neither keeps nor adds")
        audit = self._audit_entry(event, COMMITTED, superseded, added_ids)
        for new in event.added:
            self._add(new["id"], new["message"], event, added_by=event.compaction_id)
        for entry in entries:
            entry.active = False
            entry.superseded_by = event.compaction_id
        self.active_ids = [*order, *self.active_ids[event.replaced :]]
        self.compactions.append(audit)
        self.context_version = event.originator_version

    def _audit_entry(
        self,
        event: Transcript.CompactionCommitted | Transcript.CompactionFailed,
        status: str,
        superseded: list[str],
        added: list[str],
    ) -> dict[str, Any]:
        return {
            "id": event.compaction_id,
            "status": status,
            "reason": event.reason,
            "failure": None,
            "error": None,
            "superseded": self.keep_ids(list(superseded)),
            "added": self.keep_ids(added),
            "based_on_version": event.based_on_version,
            "tokens_before": event.tokens_before,
            "tokens_after": event.tokens_after,
            "at": event.timestamp,
            "version": event.originator_version,
            "metadata": getattr(event, "metadata", None),  # a failure has none
        }

    def keep_ids(self, message_ids: list[str]) -> list[str] | KeptIds:
        """A list of ids as the fold keeps it: itself, or its count and digest."""
        return KeptIds(len(message_ids), self.digest(message_ids)) if self.digest else message_ids

    def ids(self) -> Sequence[str]:
        """The ids of the history, in storage order."""
        entries = self.entries
        return entries.ids() if isinstance(entries, HistoryColumns) else list(entries)

    def kept(self, entry: HistoryEntry | ColumnEntry) -> Message | bytes:
        """An entry's message with its id as the fold keeps it: itself, or its digest."""
        return entry.digest if entry.digest is not None else with_id(entry.id, entry.contents())

    def keep(self, message: Message) -> Message | bytes:
        """A stored message (with its id) as `kept` says it, to be compared with it."""
        return self.digest(message) if self.digest else message

    def active(self) -> list[Message]:
        return [with_id(i, self.entries[i].contents()) for i in self.active_ids]

    def history(self) -> list[dict[str, Any]]:
        return [entry.as_dict() for entry in self.entries.values()]
