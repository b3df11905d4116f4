"""Reading entries where they are stored: in a conversation's session, or in the sessions of
the conversations it was forked from.

pydantic-ai names an entry by its id alone (`read_entry`, `read_history`), but the store keeps
a message in a session. A fork's session holds only the entries added after the fork: its
history goes on in its parent session (the conversation it was forked from), and so on up.
Where an entry is stored is known for every entry this object wrote or read and for the
entries a record it read names (hints, the most recent kept); an entry id it has never seen
is looked for in each conversation's session, the most recently changed first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic_ai.conversation_store import ConversationEntry

from transcripts import (
    MessageNotFoundError,
    SessionErasedError,
    SessionNotFoundError,
    TranscriptStore,
)

from .entries import entries_of, is_entry, parent_of

HINTS = 65_536  # entry ids whose session is remembered


class EntryHomes:
    """Which session stores an entry, as far as this process has seen (least recent out)."""

    def __init__(self) -> None:
        self._homes: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def note(self, session_id: str, entry_ids: Iterable[str | None]) -> None:
        with self._lock:
            for entry_id in entry_ids:
                if entry_id is not None:
                    self._homes[entry_id] = session_id
                    self._homes.move_to_end(entry_id)
            while len(self._homes) > HINTS:
                self._homes.popitem(last=False)

    def get(self, entry_id: str) -> str | None:
        with self._lock:
            return self._homes.get(entry_id)


class Entries:
    """The entries of the store's conversations (sessions of `source`), read by id."""

    def __init__(self, store: TranscriptStore, source: str) -> None:
        self.store = store
        self.source = source
        self.homes = EntryHomes()

    def history(self, head_id: str | None, limit: int | None = None) -> list[ConversationEntry]:
        """The entries from the first up to `head_id`, or its last `limit`; KeyError if one
        of them is stored nowhere."""
        if head_id is None or limit == 0:
            return []
        stored: dict[str, Mapping[str, Any]] = {}
        sessions = self._sessions_of(head_id)
        path: list[Mapping[str, Any]] = []
        current: str | None = head_id
        while current is not None and (limit is None or len(path) < limit):
            message = stored.get(current)
            if message is None:
                session_id = next(sessions, None)
                if session_id is None:
                    raise KeyError(current)
                stored.update(self.session_entries(session_id))
                continue
            path.append(message)
            current = parent_of(message)
        path.reverse()
        return entries_of(path)

    def entry(self, entry_id: str) -> ConversationEntry:
        """The entry with this id; KeyError if it is stored nowhere."""
        for session_id in self._sessions_of(entry_id):
            try:
                found = self.store.explain(session_id, entry_id)["message"]
            except (MessageNotFoundError, SessionNotFoundError, SessionErasedError):
                continue
            if is_entry(found):
                return entries_of([found])[0]
        raise KeyError(entry_id)

    def _sessions_of(self, entry_id: str) -> Iterator[str]:
        """The sessions to look for an entry in, most likely first: where it was seen and the
        sessions that one was forked from, then every conversation's session."""
        tried: set[str] = set()
        home = self.homes.get(entry_id)
        for session_id in self._lineage(home) if home is not None else ():
            tried.add(session_id)
            yield session_id
        for entry in sorted(
            self.store.sessions(source=self.source), key=lambda e: e["last_event_at"], reverse=True
        ):
            if entry["id"] not in tried and self._holds(entry["id"], entry_id):
                yield from self._lineage(entry["id"])
                return

    def _lineage(self, session_id: str) -> Iterator[str]:
        """A session, then the one it was forked from, and so on."""
        seen: set[str] = set()
        current: str | None = session_id
        while current is not None and current not in seen:
            seen.add(current)
            yield current
            try:
                entry = self.store.session(current)
            except SessionNotFoundError:
                return
            current = entry["parent_id"] or entry["state"].get("forked_from")

    def _holds(self, session_id: str, entry_id: str) -> bool:
        try:
            self.store.explain(session_id, entry_id)
        except (MessageNotFoundError, SessionNotFoundError, SessionErasedError):
            return False
        return True

    def session_entries(self, session_id: str) -> dict[str, Mapping[str, Any]]:
        """The stored message of every entry a session holds, by id (on any branch,
        superseded or not)."""
        try:
            history = self.store.history(session_id)
        except (SessionNotFoundError, SessionErasedError):
            return {}
        found = {row["id"]: row["message"] for row in history if is_entry(row["message"])}
        self.homes.note(session_id, found)
        return found
