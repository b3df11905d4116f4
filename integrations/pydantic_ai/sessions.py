"""The conversations of a transcript store, read and written as pydantic-ai's records say.

The synchronous half of `TranscriptConversationStore`: one conversation is one session
(source `pydantic-ai`), its record the session's state (`records`), and `write_record` one
`write` of the session fenced on the version it read (`plan`). The record's revision is
checked against the one the session's state holds at that version: a writer that stored
anything since makes the version move, and the call reads the session again, which tells a
save (the revision moved: `ConversationConflict`) from a change of the title (retried).
"""

from __future__ import annotations

from typing import Any

from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationDetails,
    ConversationEntry,
    ConversationRecord,
)

from transcripts import (
    Rewind,
    SessionNotFoundError,
    SetState,
    TranscriptError,
    TranscriptStore,
    VersionConflictError,
)

from .compactions import Captured, EntryFinder, in_entries
from .entries import is_entry, mark, stored_message
from .history import Entries
from .plan import SessionSnapshot, appended, extends, history_ids, planned
from .records import KEYS, details_state, record_of

SOURCE = "pydantic-ai"
TRIES = 64  # reads and writes of one call that other writers' writes may send back


class ConversationSessions:
    """The conversations of a store: one session each, of source `SOURCE`."""

    def __init__(self, store: TranscriptStore) -> None:
        self.store = store
        self.entries = Entries(store, SOURCE)

    def read_record(self, conversation_id: str) -> ConversationRecord | None:
        snapshot = self._snapshot(conversation_id)
        return None if snapshot is None else snapshot.record

    def read_records(self, scope: str | None, limit: int | None) -> list[ConversationRecord]:
        records = [
            record
            for entry in self.store.sessions(source=SOURCE)
            if (record := record_of(entry["id"], entry["state"])) is not None
            and (scope is None or record.scope == scope)
        ]
        records.sort(key=lambda record: record.updated_at, reverse=True)
        return records[:limit]

    def write_record(
        self,
        record: ConversationRecord,
        new_entries: list[ConversationEntry],
        expected_revision: str | None,
        captured: Captured | None,
    ) -> None:
        conversation_id = record.conversation_id
        for entry in new_entries:
            mark(entry)
        for _ in range(TRIES):
            snapshot = self._snapshot(conversation_id, writing=True)
            if snapshot is None:
                if expected_revision is not None:
                    break
                self._start(conversation_id, record.forked_from)
                continue
            stored = snapshot.record
            if (stored.revision if stored else None) != expected_revision:
                break
            if not self._head_stored(record, new_entries, stored):
                break
            if not (captured and captured.records) and extends(stored, record, new_entries):
                changes = appended(snapshot, record, new_entries)
            else:
                changes = self._planned(snapshot, record, new_entries, captured)
            try:
                self.store.write(conversation_id, changes, expected_version=snapshot.version)
            except VersionConflictError:
                continue  # read it again: a save since moved the revision, an update did not
            self.entries.homes.note(conversation_id, [entry.id for entry in new_entries])
            return
        raise ConversationConflict(conversation_id)

    def _planned(
        self,
        snapshot: SessionSnapshot,
        record: ConversationRecord,
        new_entries: list[ConversationEntry],
        captured: Captured | None,
    ) -> list[Any]:
        """The changes of a write that does more than extend the history, from the session
        read whole at the snapshot's version (the write is fenced on it)."""
        conversation_id = record.conversation_id
        history = self.store.history(conversation_id)
        entries = {row["id"]: row["message"] for row in history if is_entry(row["message"])}
        whole = SessionSnapshot(
            version=snapshot.version,
            record=snapshot.record,
            active_count=snapshot.active_count,
            active=[message["id"] for message in self.store.active(conversation_id)],
            entries=entries,
            superseded=frozenset(row["id"] for row in history if row["superseded_by"]),
            rewound=frozenset(row["id"] for row in history if row["rewound"]),
        )
        compactions = []
        if captured is not None:
            messages = {**entries, **{entry.id: stored_message(entry) for entry in new_entries}}
            find = EntryFinder(messages, history_ids(record.head_id, messages))
            compactions = in_entries(captured, new_entries, find)
        return planned(whole, record, new_entries, compactions)

    def write_details(
        self,
        conversation_id: str,
        details: ConversationDetails,
        expected_revision: str,
        expected: ConversationDetails,
    ) -> ConversationRecord:
        values = details_state(details)
        for _ in range(TRIES):
            snapshot = self._snapshot(conversation_id, writing=True)
            record = snapshot.record if snapshot is not None else None
            if record is None or record.revision != expected_revision:
                break
            if any(getattr(record, key) != value for key, value in expected.items()):
                break
            try:
                self.store.write(
                    conversation_id, [SetState(values)], expected_version=snapshot.version
                )
            except VersionConflictError:
                continue
            return self.read_record(conversation_id) or record
        raise ConversationConflict(conversation_id)

    def delete_record(self, conversation_id: str, expected_revision: str) -> None:
        for _ in range(TRIES):
            snapshot = self._snapshot(conversation_id, writing=True)
            record = snapshot.record if snapshot is not None else None
            if record is None or record.revision != expected_revision:
                break
            changes: list[Any] = [SetState(remove=KEYS)]
            if snapshot.active_count:
                deleted = Rewind(count=snapshot.active_count, reason="the conversation was deleted")
                changes.insert(0, deleted)
            try:
                self.store.write(conversation_id, changes, expected_version=snapshot.version)
            except VersionConflictError:
                continue
            return
        raise ConversationConflict(conversation_id)

    def _start(self, conversation_id: str, forked_from: str | None) -> None:
        """Start the conversation's session (a fork's: a child of its parent's)."""
        try:
            self.store.start(conversation_id, source=SOURCE, parent_id=forked_from)
        except TranscriptError as refused:
            try:  # started meanwhile (a fork of another conversation, say), or erased
                self.store.session(conversation_id)
            except SessionNotFoundError:
                raise refused from None  # an id no session may have, say

    def _snapshot(self, conversation_id: str, *, writing: bool = False) -> SessionSnapshot | None:
        """The conversation's session's version and record (None: never started, or another
        program's session; `writing` to it: ConversationConflict)."""
        try:
            entry = self.store.session(conversation_id)
        except SessionNotFoundError:
            return None
        if entry["source"] != SOURCE:
            if not writing:
                return None
            raise ConversationConflict(
                conversation_id,
                message=f"Conversation {conversation_id!r} names a session of the store that "
                f"{entry['source']!r} started, not pydantic-ai.",
            )
        record = record_of(conversation_id, entry["state"])
        if record is not None:
            self.entries.homes.note(
                conversation_id, [record.head_id, record.forked_at, *record.branches]
            )
        return SessionSnapshot(entry["version"], record, active_count=entry["active"])

    def _head_stored(
        self,
        record: ConversationRecord,
        new_entries: list[ConversationEntry],
        stored: ConversationRecord | None,
    ) -> bool:
        """Whether the record's head is an entry this write or the store holds."""
        head = record.head_id
        if head is None or head in {entry.id for entry in new_entries}:
            return True
        if stored is not None and head in (stored.head_id, *stored.branches):
            return True
        try:
            self.entries.entry(head)
        except KeyError:
            return False
        return True
