"""`TranscriptSessionStore`: the Claude Agent SDK's `SessionStore` on a transcript store.

Each SDK session key is one store session (`keys`), source `claude-agent-sdk`; a subagent's
key a child session of its main key's. Entries are kept verbatim in order (`entries`), and
the session's records are projected as the Claude Code importer projects a file: the same
messages, compactions and audit (`sessions`). Every method runs the synchronous store in a
worker thread, one call at a time per session (a lock per store session id); a caller
cancelled meanwhile still waits for the call's outcome.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from collections.abc import Callable
from typing import Any, TypeVar

from claude_agent_sdk import SessionStore

from transcripts import TranscriptStore

from ..stored_session import settled
from .keys import store_session_id
from .sessions import SdkSessions

T = TypeVar("T")


class TranscriptSessionStore(SessionStore):
    """The SDK's `SessionStore` on a transcript store.

    Give it a `store` (shared: you close it) or a `url` (opened here, closed by `close()`;
    neither: the default store).
    """

    def __init__(self, store: TranscriptStore | None = None, *, url: str | None = None) -> None:
        if store is not None and url is not None:
            raise TypeError("give a store or a url, not both")
        self.store = store if store is not None else TranscriptStore.open(url)
        self._owns_store = store is None
        self._sessions = SdkSessions(self.store)
        self._locks: defaultdict[str, threading.Lock] = defaultdict(threading.Lock)
        self._guard = threading.Lock()

    def close(self) -> None:
        """Close the store if it was opened here."""
        if self._owns_store:
            self.store.close()

    async def append(self, key: Any, entries: list[Any]) -> None:
        await self._run(key, self._sessions.append, key, list(entries))

    async def load(self, key: Any) -> list[Any] | None:
        return await self._run(key, self._sessions.load, key)

    async def list_sessions(self, project_key: str) -> list[Any]:
        return await self._run(None, self._sessions.list_sessions, project_key)

    async def list_session_summaries(self, project_key: str) -> list[Any]:
        return await self._run(None, self._sessions.list_session_summaries, project_key)

    async def delete(self, key: Any) -> None:
        await self._run(key, self._sessions.delete, key)

    async def list_subkeys(self, key: Any) -> list[str]:
        return await self._run(None, self._sessions.list_subkeys, key)

    async def _run(self, key: Any, function: Callable[..., T], *args: Any) -> T:
        lock = self._lock(store_session_id(key) if key is not None else None)

        def call() -> T:
            with lock:
                return function(*args)

        return await settled(asyncio.to_thread(call))

    def _lock(self, session_id: str | None) -> threading.Lock:
        if session_id is None:
            return threading.Lock()  # a read of many sessions: no one session's turn
        with self._guard:
            return self._locks[session_id]
