"""Fixtures shared by the behaviour tests: a started session, a view of everything a reader
can see of it, the checks every failed compaction must pass, and a SQLite write lock held
by another connection."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from transcripts import CompactionResult, TranscriptStore

from support.reads import seen

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

    Returns once the lock is held; a thread releases it later. The fixture waits for it.
    """
    path = sqlite_url.removeprefix("sqlite:///")
    threads: list[threading.Thread] = []

    def hold(seconds: float) -> None:
        locked = threading.Event()

        def run() -> None:
            connection = sqlite3.connect(path, isolation_level=None)
            try:
                connection.execute("BEGIN IMMEDIATE")
                locked.set()
                time.sleep(seconds)
                connection.execute("ROLLBACK")
            finally:
                connection.close()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        threads.append(thread)
        assert locked.wait(5), "could not take the SQLite write lock"

    yield hold
    for thread in threads:
        thread.join()
