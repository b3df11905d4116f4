"""TranscriptSession: the OpenAI Agents SDK's `Session` protocol on a transcript store."""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from agents.memory import OpenAIResponsesCompactionArgs, SessionSettings
from agents.memory.session import _CompactionSnapshot
from agents.memory.session_settings import coerce_session_settings, resolve_session_limit

from transcripts import TranscriptStore

from ..stored_session import StoredSession
from . import compaction
from .compaction import CompactWhen, Summarizer
from .items import Item, call_of, derived_id, fresh_id, item_of, to_message

DEDUPE_MODES = ("call_ids", None)
POPPED_KEPT = 1000  # popped items remembered, to restore them when they are added back


class TranscriptSession:
    """An Agents SDK session whose items live in a transcript store, one message per item.

    `store`, or `url` to open one (closed by `close()`; neither: the default store).
    `dedupe="call_ids"` stores a function call and its output under ids derived from their
    `call_id`, so a re-sent tool item is a no-op; `None` gives every item a fresh id (for a
    provider that reuses call ids). `summarizer(items) -> items` makes `run_compaction` one
    fenced compaction of the store, when `compact_when(items)` (default: the SDK's own
    threshold of 10 items that are not user messages) or when forced.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        store: TranscriptStore | None = None,
        *,
        url: str | None = None,
        source: str = "openai-agents",
        model: str | None = None,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        dedupe: str | None = "call_ids",
        summarizer: Summarizer | None = None,
        compact_when: CompactWhen | None = None,
    ) -> None:
        if dedupe not in DEDUPE_MODES:
            raise ValueError(f"dedupe is 'call_ids' or None, not {dedupe!r}")
        self.session_id = session_id
        self.session_settings = SessionSettings()
        if session_settings is not None:
            self.session_settings = coerce_session_settings(session_settings)
        self._dedupe = dedupe
        self._summarizer = summarizer
        self._compact_when = compact_when or compaction.default_compact_when
        self._stored = StoredSession(
            session_id, store, url, source=source, model=model, owner="TranscriptSession"
        )
        self._popped: deque[tuple[str, str]] = deque(maxlen=POPPED_KEPT)

    @property
    def store(self) -> TranscriptStore:
        return self._stored.store

    # -- the Session protocol ---------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Item]:
        """The active items in order, exactly as added; the latest `limit` of them (or
        `session_settings.limit`) when given."""
        self._check_open()
        limit = resolve_session_limit(limit, self.session_settings)
        if limit == 0:
            return []
        active = await self._stored.run(self._stored.active)
        if limit is not None and limit > 0:
            active = active[-limit:]
        return [item_of(message) for message in active]

    async def add_items(self, items: list[Item]) -> None:
        """Store the items in one transaction. A function call or output already stored is
        a no-op; a popped item added again is restored."""
        self._check_open()
        if items:
            await self._stored.run(self._add, list(items))

    async def pop_item(self) -> Item | None:
        """Take the latest item out of the active context (it stays in the history)."""
        self._check_open()
        return await self._stored.run(self._pop)

    async def clear_session(self) -> None:
        """Take every item out of the active context; the history is kept and the session
        stays usable."""
        self._check_open()
        await self._stored.run(self._clear)

    def close(self) -> None:
        """Refuse further calls; close the store if this session opened it."""
        self._stored.close()

    # -- compaction --------------------------------------------------------------------------

    async def run_compaction(self, args: OpenAIResponsesCompactionArgs | None = None) -> None:
        """With a summarizer: one fenced compaction of the active items (see compaction)."""
        self._check_open()
        if self._summarizer is not None:
            force = bool(args and args.get("force"))
            await compaction.summarize(self._stored, self._summarizer, self._compact_when, force)

    async def _get_compaction_snapshot(self, limit: int, **_: Any) -> _CompactionSnapshot:
        """The SDK's compaction wrapper: the latest items, with a fenced suffix replacement.
        (`prune_prefix`, for stores whose items expire, has nothing to prune here.)"""
        self._check_open()
        return await compaction.snapshot(self._stored, limit)

    async def _atomic_replace_items(self, items: list[Item]) -> bool:
        """The SDK's compaction wrapper: the whole history replaced in one compaction."""
        self._check_open()
        return await self._stored.run(compaction.replace_all, self._stored, items)

    # -- under the session's lock, in a worker thread ----------------------------------------

    def _add(self, items: list[Item]) -> None:
        messages = [{**to_message(item), "id": self._id_of(item)} for item in items]
        self._stored.append(self._with_their_calls(messages))

    def _with_their_calls(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages, each function call output added without its call preceded by that
        call as stored: a popped output added back restores the call it answers with it, in
        front of it, if the call was popped too (the pair restores together; a call in the
        context already is left where it is). So two pop-then-add-back pairs interleaving, in
        tasks or processes, never leave an output before its call."""
        if self._dedupe != "call_ids":
            return messages
        given = {message["id"] for message in messages}
        with_calls: list[dict[str, Any]] = []
        for message in messages:
            maker = call_of(message)
            if maker is not None and maker not in given:
                call = self._stored.message(maker)
                if call is not None:
                    with_calls.append(call)
            with_calls.append(message)
        return with_calls

    def _id_of(self, item: Item) -> str:
        """Derived from its call id; a popped item's own id (to restore it); else fresh."""
        if self._dedupe == "call_ids" and (derived := derived_id(item)) is not None:
            return derived
        key = _canonical(item)
        for popped in reversed(self._popped):
            if popped[0] == key:
                self._popped.remove(popped)
                return popped[1]
        return fresh_id()

    def _pop(self) -> Item | None:
        rewound = self._stored.rewind(1, "pop_item")
        if not rewound:
            return None
        item = item_of(rewound[0])
        self._popped.append((_canonical(item), rewound[0]["id"]))
        return item

    def _clear(self) -> None:
        self._stored.clear("clear_session")
        self._popped.clear()

    def _check_open(self) -> None:
        self._stored.check_open()


def _canonical(item: object) -> str:
    try:
        return json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(item)
