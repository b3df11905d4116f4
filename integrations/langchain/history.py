"""TranscriptChatMessageHistory: LangChain's chat message history on a transcript store."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage

from transcripts import TranscriptStore

from ..stored_session import StoredSession
from .messages import from_stored, to_stored


class TranscriptChatMessageHistory(BaseChatMessageHistory):
    """The messages of one store session, sync and async (`RunnableWithMessageHistory`).

    `store`, or `url` to open one (closed by `close()`; neither: the default store). A
    message keeps its id (adding it again is a no-op), one without gets a new id; `clear()`
    takes every message out of the active context, history kept.
    """

    def __init__(
        self,
        session_id: str,
        store: TranscriptStore | None = None,
        *,
        url: str | None = None,
        source: str = "langchain",
    ) -> None:
        self.session_id = session_id
        self._stored = StoredSession(
            session_id, store, url, source=source, owner="TranscriptChatMessageHistory"
        )

    @property
    def store(self) -> TranscriptStore:
        return self._stored.store

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The active messages, in order, each with its id."""
        return [from_stored(message) for message in self._stored.call(self._stored.active)]

    async def aget_messages(self) -> list[BaseMessage]:
        return [from_stored(message) for message in await self._stored.run(self._stored.active)]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store the messages in one transaction."""
        stored = [to_stored(message) for message in messages]
        if stored:
            self._stored.call(self._stored.append, stored)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        stored = [to_stored(message) for message in messages]
        if stored:
            await self._stored.run(self._stored.append, stored)

    def clear(self) -> None:
        """Take every message out of the active context; the history is kept."""
        self._stored.call(self._stored.clear, "clear")

    async def aclear(self) -> None:
        await self._stored.run(self._stored.clear, "clear")

    def close(self) -> None:
        """Close the store if this history opened it."""
        self._stored.close()
