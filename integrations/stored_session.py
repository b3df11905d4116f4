"""One store session as a framework adapter uses it.

The store is given (shared, closed by its owner) or opened from a URL (owned: `close()`
closes it). The session is started on its first write, with the adapter's source and model,
and a session never started reads as empty. Calls run one at a time under a threading lock,
never an asyncio primitive: one adapter object may be driven from several threads, each with
its own event loop. Async callers run them in a worker thread (`run`), off the event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from transcripts import MessageNotFoundError, SessionNotFoundError, TranscriptStore

T = TypeVar("T")

CLEAR_ALL = 2**62
"""A rewind count past any active context: `clear` takes every active message out."""


class StoredSession:
    """A session of a transcript store, read and written one call at a time."""

    def __init__(
        self,
        session_id: str,
        store: TranscriptStore | None,
        url: str | None,
        *,
        source: str,
        model: str | None = None,
        owner: str = "session",
    ) -> None:
        if store is not None and url is not None:
            raise TypeError("give a store or a url, not both")
        self.session_id = session_id
        self.store = store if store is not None else TranscriptStore.open(url)
        self._owns_store = store is None
        self._source = source
        self._model = model
        self._lock = threading.Lock()
        self._owner = owner
        self.closed = False

    def check_open(self) -> None:
        """Raise RuntimeError once closed."""
        if self.closed:
            raise RuntimeError(f"{self._owner} is closed")

    # -- running calls -----------------------------------------------------------------

    def call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `function(*args, **kwargs)` under the session's lock (RuntimeError once
        closed)."""
        self.check_open()
        with self._lock:
            return function(*args, **kwargs)

    async def run(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`call` in a worker thread. A caller cancelled meanwhile still waits for the
        outcome (a write may have landed), then is cancelled."""
        return await settled(asyncio.to_thread(self.call, function, *args, **kwargs))

    # -- the store calls (run them through `call` or `run`) -------------------------------

    def active(self) -> list[dict[str, Any]]:
        """The active context, each message with its id; empty if never started."""
        try:
            return self.store.active(self.session_id)
        except SessionNotFoundError:
            return []

    def message(self, message_id: str) -> dict[str, Any] | None:
        """The stored message of that id, active or not (None: never stored)."""
        try:
            return dict(self.store.explain(self.session_id, message_id)["message"])
        except (SessionNotFoundError, MessageNotFoundError):
            return None

    def append(self, messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """`store.append` (it restores a rewound id), starting the session if need be."""
        messages = list(messages)
        return self._started(lambda: self.store.append(self.session_id, messages))

    def sync(self, messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """`store.sync` (stored ids skipped, never restored), starting the session if need
        be; the active context."""
        messages = list(messages)
        return self._started(lambda: self.store.sync(self.session_id, messages))

    def _started(self, write: Callable[[], T]) -> T:
        try:
            return write()
        except SessionNotFoundError:
            self.store.start(self.session_id, source=self._source, model=self._model)
            return write()

    def rewind(self, count: int, reason: str) -> list[dict[str, Any]]:
        """`store.rewind(count=…)`: the messages taken out, in active order."""
        try:
            return self.store.rewind(self.session_id, count=count, reason=reason)
        except SessionNotFoundError:
            return []

    def clear(self, reason: str) -> None:
        """Every active message rewound: the history kept, the session still usable."""
        self.rewind(CLEAR_ALL, reason)

    def close(self) -> None:
        """Refuse further calls; close the store if it was opened here."""
        with self._lock:
            if not self.closed and self._owns_store:
                self.store.close()
            self.closed = True


async def settled(awaitable: Awaitable[T]) -> T:
    """Await `awaitable` to its outcome even if the caller is cancelled meanwhile; then
    raise the cancellation (a write that landed is not retried by a caller who thinks it
    did not)."""
    task = asyncio.ensure_future(awaitable)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError as error:
            cancelled = cancelled or error
    if cancelled is not None:
        if not task.cancelled():
            task.exception()  # retrieved: no "exception never retrieved" warning
        raise cancelled
    return task.result()
