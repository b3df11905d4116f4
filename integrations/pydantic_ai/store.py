"""`TranscriptConversationStore`: pydantic-ai's `ConversationStore` on a transcript store.

One conversation is one session (its id, source `pydantic-ai`), each entry one message of
it (`entries`), the record its state (`records`); a fork's session is a child of the
session of the conversation it was forked from. `write_record` is one `write`: its new
entries, the compactions its save captured (`compactions`), what leaves or returns to the
history, and the record, in one transaction fenced on the session's version (`plan`,
`sessions`). `save` captures a run's compactions on its way to `write_record`.

Every call runs the synchronous store (`sessions`) in a worker thread; a caller cancelled
meanwhile still waits for the call's outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import (
    ConversationDetails,
    ConversationEntry,
    ConversationRecord,
    ConversationStore,
)
from pydantic_ai.run import AgentRunResult

from transcripts import TranscriptStore

from ..stored_session import settled
from .compactions import Captured
from .records import DETAILS
from .sessions import ConversationSessions

T = TypeVar("T")

_captured: ContextVar[Captured | None] = ContextVar("transcripts_pydantic_ai_run", default=None)


class TranscriptConversationStore(ConversationStore):
    """pydantic-ai's `ConversationStore` on a transcript store.

    Give it a `store` (shared: you close it) or a `url` (opened here, closed by `close()`;
    neither: the default store). Save a run's result (`save(result)`), not its
    `conversation`, for its compactions to be recorded as such.
    """

    def __init__(self, store: TranscriptStore | None = None, *, url: str | None = None) -> None:
        if store is not None and url is not None:
            raise TypeError("give a store or a url, not both")
        self.store = store if store is not None else TranscriptStore.open(url)
        self._owns_store = store is None
        self._sessions = ConversationSessions(self.store)

    def close(self) -> None:
        """Close the store if it was opened here."""
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> TranscriptConversationStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    async def save(
        self, conversation: Conversation | AgentRunResult[Any], *, scope: str | None = None
    ) -> list[ConversationEntry]:
        """`ConversationStore.save`, recording the compactions of a run's result."""
        captured = Captured.of(conversation) if isinstance(conversation, AgentRunResult) else None
        token = _captured.set(captured)
        try:
            return await super().save(conversation, scope=scope)
        finally:
            _captured.reset(token)

    # -- the storage primitives ------------------------------------------------------------

    async def read_record(self, conversation_id: str) -> ConversationRecord | None:
        return await _off_loop(self._sessions.read_record, conversation_id)

    async def read_records(
        self, *, scope: str | None = None, limit: int | None = None
    ) -> Sequence[ConversationRecord]:
        return await _off_loop(self._sessions.read_records, scope, limit)

    async def write_record(
        self,
        record: ConversationRecord,
        *,
        new_entries: Sequence[ConversationEntry] = (),
        expected_revision: str | None,
    ) -> None:
        captured = _captured.get()
        if captured is not None and captured.conversation_id != record.conversation_id:
            captured = None
        await _off_loop(
            self._sessions.write_record, record, list(new_entries), expected_revision, captured
        )

    async def write_details(
        self,
        conversation_id: str,
        details: ConversationDetails,
        *,
        expected_revision: str,
        expected: ConversationDetails | None = None,
    ) -> ConversationRecord:
        unknown = {*details, *(expected or {})} - set(DETAILS)
        if unknown:
            raise NotImplementedError(f"a conversation's details are {DETAILS}, not {unknown}")
        return await _off_loop(
            self._sessions.write_details,
            conversation_id,
            details,
            expected_revision,
            expected or {},
        )

    async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
        """Delete the record; the entries stay stored (the session's history), out of its
        context: `store.forget(conversation_id)` erases them for good."""
        await _off_loop(self._sessions.delete_record, conversation_id, expected_revision)

    async def read_entry(self, entry_id: str) -> ConversationEntry:
        return await _off_loop(self._sessions.entries.entry, entry_id)

    async def read_history(
        self, head_id: str | None, *, limit: int | None = None
    ) -> list[ConversationEntry]:
        return await _off_loop(self._sessions.entries.history, head_id, limit)


async def _off_loop(function: Callable[..., T], *args: Any) -> T:
    """`function(*args)` in a worker thread, waited for to its outcome."""
    return await settled(asyncio.to_thread(function, *args))
