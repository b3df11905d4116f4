"""Compactions of an Agents SDK session, each one fenced compaction of the store.

- `summarize`: the Runner's `run_compaction` with the session's own `summarizer(items) ->
  items` (any model, sync or async): begin, summarize, commit; a raising summarizer is a
  recorded `summarize_error` and the run goes on.
- `snapshot`: the SDK's `OpenAIResponsesCompactionSession` asks the session it wraps for a
  snapshot of its latest items whose suffix it can replace atomically (its private hook
  `_get_compaction_snapshot`); the replacement commits only if that suffix is still the
  active tail, else it is a recorded `conflict` and the SDK keeps the history.
- `replace_all`: the same wrapper's whole-history replacement (its private hook
  `_atomic_replace_items`): one compaction superseding the active context. It raises rather
  than say False, which would make the wrapper fall back to `clear_session` + `add_items`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any

from agents.memory.openai_responses_compaction_session import (
    DEFAULT_COMPACTION_THRESHOLD,
    select_compaction_candidate_items,
)
from agents.memory.session import _CompactionSnapshot

from transcripts import CompactionAttempt, SessionNotFoundError, TranscriptError

from ..stored_session import StoredSession
from .items import Item, item_of, to_message

logger = logging.getLogger(__name__)

Summarizer = Callable[[list[Item]], Any]  # returns the items, or an awaitable of them
CompactWhen = Callable[[list[Item]], bool]

SUMMARIZED = "openai-agents run_compaction"
RESPONSES_COMPACT = "openai-agents responses.compact"


def default_compact_when(items: list[Item]) -> bool:
    """The SDK's own default: at least 10 items that are neither user messages nor
    compaction items."""
    return len(select_compaction_candidate_items(items)) >= DEFAULT_COMPACTION_THRESHOLD


async def summarize(
    stored: StoredSession, summarizer: Summarizer, compact_when: CompactWhen, force: bool
) -> None:
    """One compaction of the active items by `summarizer`, if `force` or `compact_when`."""
    store = stored.store
    try:
        attempt = await stored.run(store.begin_compaction, stored.session_id)
    except SessionNotFoundError:  # never started: nothing to compact
        return
    items = [item_of(message) for message in attempt.messages]
    if not items or not (force or compact_when(items)):
        return  # an attempt writes nothing until it settles
    try:
        output = await asyncio.to_thread(summarizer, items)
        if inspect.isawaitable(output):
            output = await output
        replacement = _replacement(attempt, items, output)
    except Exception as error:  # recorded, and the run goes on
        logger.warning("summarizer failed; the history is kept: %r", error)
        await stored.run(store.fail_compaction, attempt, error, reason=SUMMARIZED)
        return
    result = await stored.run(store.commit_compaction, attempt, replacement, reason=SUMMARIZED)
    if not result.committed:
        logger.warning("compaction not committed (%s): %s", result.failure, result.error)


def _replacement(attempt: CompactionAttempt, items: list[Item], output: object) -> list[object]:
    """The summarizer's items as a replacement: an item equal to one it was given keeps
    that message (each at most once), any other is a new message."""
    if not isinstance(output, Sequence) or isinstance(output, (str, bytes)):
        raise TypeError(f"a summarizer returns a list of items, not {type(output).__name__}")
    unused = list(range(len(items)))
    replacement: list[object] = []
    for item in output:
        kept = next((index for index in unused if items[index] == item), None)
        if kept is None:
            replacement.append(to_message(item))
        else:
            unused.remove(kept)
            replacement.append(attempt.messages[kept])
    return replacement


async def snapshot(stored: StoredSession, limit: int) -> _CompactionSnapshot:
    """The last `limit` active items, and the fenced replacement of their suffix."""
    active = await stored.run(stored.active)
    tail = active[-limit:] if limit > 0 else []
    tail_ids = [message["id"] for message in tail]

    async def replace_suffix(start: int, output: list[Item]) -> bool:
        expected = tail_ids[start:]
        if not expected:
            return False
        return await stored.run(_replace_tail, stored, expected, output)

    return _CompactionSnapshot(
        [item_of(message) for message in tail], len(active) <= limit, replace_suffix
    )


def _replace_tail(stored: StoredSession, expected: list[str], output: list[Item]) -> bool:
    store = stored.store
    attempt = store.begin_compaction(stored.session_id)
    ids = [message["id"] for message in attempt.messages]
    cut = len(ids) - len(expected)
    kept = attempt.messages[:cut]
    if cut < 0 or ids[cut:] != expected:
        error = "the items the compaction summarized are no longer the active tail"
        proposed = [to_message(item) for item in output]  # kept in the failure
        store.fail_compaction(
            attempt, error, failure="conflict", reason=RESPONSES_COMPACT, replacement=proposed
        )
        return False
    replacement = [*kept, *(to_message(item) for item in output)]
    return store.commit_compaction(attempt, replacement, reason=RESPONSES_COMPACT).committed


def replace_all(stored: StoredSession, items: list[Item]) -> bool:
    """Every active message superseded by `items`, in one compaction; raise if it did not
    commit."""
    store = stored.store
    replacement = [to_message(item) for item in items]
    try:
        attempt = store.begin_compaction(stored.session_id)
    except SessionNotFoundError:  # no history to replace
        stored.append(replacement)
        return True
    result = store.commit_compaction(attempt, replacement, reason=RESPONSES_COMPACT)
    if not result.committed:
        raise TranscriptError(f"compaction not committed ({result.failure}): {result.error}")
    return True
