"""TranscriptMiddleware: a LangChain v1 agent's messages mirrored into a transcript store."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any
from uuid import uuid4

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime

from transcripts import TranscriptStore

from ..stored_session import StoredSession
from .messages import to_stored


class TranscriptMiddleware(AgentMiddleware):
    """Mirrors the agent's messages into the store session named by the graph's
    `thread_id`, before and after each model call and when the agent ends. Idempotent by
    id: each message is stored once, however often it is seen; a message stored already,
    rewound or superseded is never stored again (`store.sync`)."""

    def __init__(self, store: TranscriptStore, *, source: str = "langgraph") -> None:
        super().__init__()
        self.store = store
        self.source = source

    def before_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        mirror(self.store, thread_of(runtime), state["messages"], source=self.source)
        return None

    async def abefore_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        await amirror(self.store, thread_of(runtime), state["messages"], source=self.source)
        return None

    def after_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    async def aafter_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        return await self.abefore_model(state, runtime)

    def after_agent(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    async def aafter_agent(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        return await self.abefore_model(state, runtime)


def thread_of(runtime: Runtime) -> str:
    """The graph's `thread_id` (`config={"configurable": {"thread_id": …}}`)."""
    info = runtime.execution_info
    if info is None or not info.thread_id:
        raise ValueError(
            "a transcript is named by the graph's thread_id: invoke the agent with "
            'config={"configurable": {"thread_id": "…"}}'
        )
    return str(info.thread_id)


def mirror(
    store: TranscriptStore, thread: str, messages: Sequence[BaseMessage], *, source: str
) -> list[dict[str, Any]]:
    """Store the messages not stored yet in the thread's session; its active context."""
    for message in messages:
        if message.id is None:  # as LangChain's own middleware does: ids for the reducer
            message.id = str(uuid4())
    stored = [to_stored(message) for message in messages]
    return StoredSession(thread, store, None, source=source).sync(stored)


async def amirror(
    store: TranscriptStore, thread: str, messages: Sequence[BaseMessage], *, source: str
) -> list[dict[str, Any]]:
    return await asyncio.to_thread(mirror, store, thread, messages, source=source)
