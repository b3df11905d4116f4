"""What one `write_record` changes in the store: the changes of its one `write`.

The session's active context is the conversation's history (the entries from its record's
head back to its first, as `load` returns them) without what compactions summarized, in
history order, and without the entries of the conversations it was forked from (their
sessions hold those). So:

- a save that extends the history appends its new entries;
- a save that rewrote it (its new entries branch off an earlier entry), a `branch` (the head
  moves back, or onto a branch left before) and a delete take what leaves the history out of
  the context (`Rewind`: the entries stay stored, marked rewound), and put back the entries
  of a branch it returns to (`Append` restores a rewound message);
- each compaction the save captured (`compactions`) is one `Compact` once the messages it
  replaced are stored: the entries it summarized leave the context, its summary takes its
  place in the history, what it kept stays;
- the record is the session's state (`records`), written last.

A compaction is final: entries it summarized stay out of the context on every branch (they
stay stored, and `load` returns them where the history holds them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.conversation_store import ConversationEntry, ConversationRecord

from transcripts import Append, Compact, Rewind, SetState

from .compactions import EntryCompaction
from .entries import parent_of, stored_message
from .records import state_of

Change = Append | Rewind | Compact | SetState
LEFT = "left the conversation's history"  # why a rewind takes an entry out of the context


@dataclass(frozen=True)
class SessionSnapshot:
    """A conversation's session as stored, at one version."""

    version: int
    record: ConversationRecord | None
    active_count: int = 0
    active: list[str] = field(default_factory=list)  # ids, in order (read whole: `planned`)
    entries: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # stored, by id
    superseded: frozenset[str] = frozenset()
    rewound: frozenset[str] = frozenset()


def extends(
    stored: ConversationRecord | None,
    record: ConversationRecord,
    new_entries: Sequence[ConversationEntry],
) -> bool:
    """Whether a write only adds entries after the stored head (and its record)."""
    if stored is None:
        return False
    head = stored.head_id
    for entry in new_entries:
        if entry.parent_id != head:
            return False
        head = entry.id
    return record.head_id == head


def appended(
    snapshot: SessionSnapshot, record: ConversationRecord, new_entries: Sequence[ConversationEntry]
) -> list[Change]:
    """The changes of a write that `extends` the history (no compaction)."""
    changes: list[Change] = (
        [Append([stored_message(e) for e in new_entries])] if new_entries else []
    )
    return [*changes, _state(snapshot, record)]


def planned(
    snapshot: SessionSnapshot,
    record: ConversationRecord,
    new_entries: Sequence[ConversationEntry],
    compactions: Sequence[EntryCompaction],
) -> list[Change]:
    """The changes of any write, from the session's snapshot (see the module's doc)."""
    messages = {**snapshot.entries, **{e.id: stored_message(e) for e in new_entries}}
    path = history_ids(record.head_id, messages)
    position = {entry_id: index for index, entry_id in enumerate(path)}
    changes, active = _leaving(snapshot.active, position)
    added = {entry_id for compaction in compactions for entry_id in compaction.added}
    staying = {*active, *added, *snapshot.superseded}
    pending = [entry_id for entry_id in path if entry_id not in staying]  # new or restored
    for compaction in compactions:
        until = position.get(compaction.answering or "", len(path))
        now = [entry_id for entry_id in pending if position[entry_id] <= until]
        pending = pending[len(now) :]
        if now:
            changes.append(Append([messages[entry_id] for entry_id in now]))
        summarized = set(compaction.summarized)
        kept = [entry_id for entry_id in [*active, *now] if entry_id not in summarized]
        active = sorted(
            dict.fromkeys([*kept, *compaction.added]), key=lambda i: position.get(i, -1)
        )
        replacement = [messages[entry_id] for entry_id in active]
        changes.append(Compact(replacement, reason=compaction.reason, metadata=compaction.metadata))
    if pending:
        changes.append(Append([messages[entry_id] for entry_id in pending]))
    return [*changes, _state(snapshot, record)]


def _leaving(active: list[str], position: Mapping[str, int]) -> tuple[list[Change], list[str]]:
    """The rewind taking what left the history out of the context (every active message
    after the last one the history holds), and the active ids it leaves."""
    held = [index for index, entry_id in enumerate(active) if entry_id in position]
    if not held:
        return ([Rewind(count=len(active), reason=LEFT)] if active else []), []
    last = held[-1]
    rewind = [Rewind(to=active[last], reason=LEFT)] if last < len(active) - 1 else []
    return rewind, active[: last + 1]


def history_ids(head_id: str | None, entries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The ids of the history ending at `head_id` that `entries` hold, first first: up to
    where it goes on in the conversation it was forked from."""
    path: list[str] = []
    current = head_id
    while current is not None and current in entries and len(path) <= len(entries):
        path.append(current)
        current = parent_of(entries[current])
    path.reverse()
    return path


def _state(snapshot: SessionSnapshot, record: ConversationRecord) -> SetState:
    """The record as the session's state; a replaced record keeps its title and metadata."""
    return SetState(state_of(record, keep_details=snapshot.record is not None))
