"""StoredSession, the store session every adapter uses: calls one at a time, off the event
loop, and a caller cancelled during a write waits for its outcome."""

from __future__ import annotations

import asyncio
import threading

import pytest

from transcripts import TranscriptStore
from transcripts.integrations.stored_session import StoredSession


def test_a_caller_cancelled_during_a_write_waits_for_its_outcome_then_is_cancelled(
    store: TranscriptStore,
) -> None:
    stored = StoredSession("s", store, None, source="test")
    writing, finish = threading.Event(), threading.Event()

    def slow_append() -> None:
        writing.set()
        finish.wait(timeout=30)
        stored.append([{"role": "user", "content": "landed"}])

    async def cancel_midway() -> bool:
        task = asyncio.ensure_future(stored.run(slow_append))
        await asyncio.to_thread(writing.wait, 30)
        task.cancel()
        await asyncio.sleep(0.05)
        still_waiting = not task.done()
        finish.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        return still_waiting

    assert asyncio.run(cancel_midway())
    assert [message["content"] for message in store.active("s")] == ["landed"]


def test_calls_of_one_session_run_one_at_a_time_and_not_after_close(
    store: TranscriptStore,
) -> None:
    stored = StoredSession("s", store, None, source="test", owner="the session")
    inside, overlaps = [0], []

    def call() -> None:
        inside[0] += 1
        overlaps.append(inside[0])
        threading.Event().wait(0.01)
        inside[0] -= 1

    threads = [threading.Thread(target=stored.call, args=(call,)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps == [1] * 6

    stored.close()
    with pytest.raises(RuntimeError, match="the session is closed"):
        stored.call(call)
    assert store.sessions() == []  # a shared store stays open: its owner closes it
    with pytest.raises(TypeError, match="a store or a url"):
        StoredSession("s", store, "memory://", source="test")
