"""Fixtures shared by the behaviour tests: a started session, a view of everything a reader
can see of it, the checks every failed compaction must pass, and a SQLite write lock held
by another connection."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from support.reads import seen
from support.rows import write_lock_held
from transcripts import CompactionResult, TranscriptStore

SESSION = "session-1"

Observe = Callable[[TranscriptStore, str], dict[str, Any]]


@pytest.fixture
def session(store: TranscriptStore) -> str:
    """A started session with no messages yet."""
    store.start(SESSION)
    return SESSION


@pytest.fixture
def observe() -> Observe:
    """Everything a reader can see of one session, to compare before and after."""
    return seen


@pytest.fixture
def check_failed(observe: Observe) -> Callable[..., dict[str, Any]]:
    """Check what every failed compaction guarantees; return its audit entry.

    `before` is `observe(...)` taken before the failing call (and after any concurrent
    appends): the failure must add exactly one CompactionFailed event and one audit entry,
    and change neither the active list nor the history.
    """

    def check(
        store: TranscriptStore,
        session_id: str,
        result: CompactionResult,
        before: dict[str, Any],
        failure: str,
    ) -> dict[str, Any]:
        after = observe(store, session_id)
        assert result.committed is False
        assert result.failure == failure
        assert isinstance(result.error, str) and result.error
        assert result.messages == before["active"] == after["active"]
        assert after["history"] == before["history"]
        assert after["events"][:-1] == before["events"]
        assert after["events"][-1]["type"] == "CompactionFailed"
        assert after["compactions"][:-1] == before["compactions"]
        entry = after["compactions"][-1]
        assert entry["id"] == result.compaction_id
        assert entry["status"] == "failed"
        assert entry["failure"] == failure
        assert entry["error"] == result.error
        assert entry["added"] == []
        return entry

    return check


@pytest.fixture
def hold_write_lock(sqlite_url: str) -> Iterator[Callable[[float], None]]:
    """Hold the write lock of the SQLite file from another connection for `seconds`.

    Returns once the lock is held; it is released `seconds` later (or when the test ends).
    """
    with ExitStack() as held:
        yield lambda seconds: held.enter_context(write_lock_held(sqlite_url, seconds))
