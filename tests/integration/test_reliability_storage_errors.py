"""Storage trouble is a typed error, and never loses or duplicates what was acknowledged.

SQLite: another connection holds the file's write lock (BEGIN IMMEDIATE) past the store's
short lock timeout while the store's views are behind the log (a writer without the views
appended after it opened): every call that must catch the views up first — `active`,
`history`, `sessions`, `search`, `begin_compaction`, `verify_projections`,
`rebuild_projections`, and the writes — raises `StorageError` (not the library's
OperationalError); `compact` and `commit_compaction` never raise for it: they return
`committed=False` with failure `storage_error` (or `committed=True` if the write landed).
Nothing changes.

PostgreSQL: another connection terminates the store's server processes every few
milliseconds while the store appends, reads and compacts: nothing acknowledged is lost,
nothing is stored twice, and only `TranscriptError`s are raised (dropped connections are
retried until the lock timeout).
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from support.log import WriterBehindTheViews
from support.postgres import connect
from support.rows import log_rows, write_lock_held
from transcripts import (
    CompactionResult,
    StorageError,
    TranscriptError,
    TranscriptStore,
)

S = "s"
LOCK_TIMEOUT = 0.5
HOLD = 4.0  # seconds the other connection holds the write lock: well past the timeout


@pytest.fixture
def behind(sqlite_url: str) -> Iterator[tuple[TranscriptStore, Any]]:
    """A store (lock timeout 0.5 s) whose views are behind the log: a writer without the
    views appended and started a session after it opened. Also an attempt it began before
    that."""
    with TranscriptStore.open(sqlite_url) as writer:
        writer.start(S)
        writer.append(
            S, [{"id": f"m{i}", "role": "user", "content": f"hello {i}"} for i in range(3)]
        )
    reader = TranscriptStore.open(sqlite_url, lock_timeout=LOCK_TIMEOUT)
    try:
        attempt = reader.begin_compaction(S)
        with WriterBehindTheViews(sqlite_url) as writer:
            writer.append(S, [{"id": "late", "role": "user", "content": "hello late"}])
            writer.start("other")
        yield reader, attempt
    finally:
        reader.close()


def summarize(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "summary"}, messages[-1]]


RAISING: dict[str, Callable[[TranscriptStore], object]] = {
    "active": lambda st: st.active(S),
    "history": lambda st: st.history(S),
    "compactions": lambda st: st.compactions(S),
    "sessions": lambda st: st.sessions(),
    "explain": lambda st: st.explain(S, "m0"),
    "search": lambda st: st.search("hello"),
    "begin_compaction": lambda st: st.begin_compaction(S),
    "verify_projections": lambda st: st.verify_projections(),
    "rebuild_projections": lambda st: st.rebuild_projections(),
    "catch_up_projections": lambda st: st.catch_up_projections(),
    "append": lambda st: st.append(S, [{"id": "new", "role": "user", "content": "x"}]),
    "sync": lambda st: st.sync(S, [{"id": "new", "role": "user", "content": "x"}]),
    "start": lambda st: st.start("new-session"),
    "forget": lambda st: st.forget("other"),
}


@pytest.mark.parametrize("call", RAISING)
def test_a_call_that_cannot_get_the_sqlite_write_lock_raises_a_storage_error(
    behind: tuple[TranscriptStore, Any], sqlite_url: str, call: str
) -> None:
    store, _ = behind
    rows = log_rows(sqlite_url)
    with write_lock_held(sqlite_url, HOLD):
        began = time.monotonic()
        with pytest.raises(StorageError) as raised:
            RAISING[call](store)
        took = time.monotonic() - began
    assert took < HOLD, f"waited {took:.1f} s: past the lock timeout of {LOCK_TIMEOUT} s"
    assert "lock" in str(raised.value).lower() or "busy" in str(raised.value).lower()
    assert log_rows(sqlite_url) == rows
    assert [m["id"] for m in store.active(S)] == ["m0", "m1", "m2", "late"]  # lock released
    assert store.verify_projections().ok


def _storage_trouble_result(result: object) -> None:
    assert isinstance(result, CompactionResult), result
    if result.committed:
        return  # it landed after all
    assert result.failure == "storage_error", (result.failure, result.error)
    assert isinstance(result.error, str) and result.error


def test_compact_under_a_held_sqlite_write_lock_returns_a_storage_error_failure(
    behind: tuple[TranscriptStore, Any], sqlite_url: str
) -> None:
    store, _ = behind
    with write_lock_held(sqlite_url, HOLD):
        try:
            result = store.compact(S, summarize, reason="locked")
        except StorageError:
            # begin_compaction could not read the views: nothing was attempted. Acceptable
            # only as a StorageError, never the library's OperationalError.
            return
        except Exception as error:  # noqa: BLE001
            pytest.fail(f"{type(error).__module__}.{type(error).__name__}: {error}")
    _storage_trouble_result(result)
    assert store.verify_projections().ok


def test_commit_compaction_under_a_held_sqlite_write_lock_never_raises(
    behind: tuple[TranscriptStore, Any], sqlite_url: str
) -> None:
    store, attempt = behind
    with write_lock_held(sqlite_url, HOLD):
        try:
            result = store.commit_compaction(attempt, summarize(attempt.messages), reason="x")
        except Exception as error:  # noqa: BLE001
            pytest.fail(f"raised {type(error).__module__}.{type(error).__name__}: {error}")
    _storage_trouble_result(result)
    assert store.verify_projections().ok


def test_fail_compaction_under_a_held_sqlite_write_lock_never_raises(
    behind: tuple[TranscriptStore, Any], sqlite_url: str
) -> None:
    store, attempt = behind
    with write_lock_held(sqlite_url, HOLD):
        try:
            result = store.fail_compaction(attempt, "summarizer timed out")
        except Exception as error:  # noqa: BLE001
            pytest.fail(f"raised {type(error).__module__}.{type(error).__name__}: {error}")
    assert isinstance(result, CompactionResult) and not result.committed
    assert store.verify_projections().ok


def test_reads_of_views_that_are_current_do_not_wait_for_the_write_lock(
    sqlite_url: str,
) -> None:
    with TranscriptStore.open(sqlite_url, lock_timeout=LOCK_TIMEOUT) as store:
        store.start(S)
        store.append(S, [{"id": "m0", "role": "user", "content": "hello"}])
        expected = store.active(S)
        store.search("hello")  # the search index, which appends leave behind, current too
        with write_lock_held(sqlite_url, HOLD):
            assert store.active(S) == expected
            assert [h["id"] for h in store.history(S)] == ["m0"]
            assert [s["id"] for s in store.sessions()] == [S]
            assert [h["message_id"] for h in store.search("hello")] == ["m0"]


# -- PostgreSQL: connections terminated under the store's feet -------------------------------

TERMINATE = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
)
RUN_SECONDS = 5.0


def terminator(url: str, stop: threading.Event, killed: list[int]) -> None:
    """Terminate every other backend of the database every few milliseconds."""
    rng = random.Random(7)
    with connect(url) as connection:
        while not stop.is_set():
            rows = connection.execute(TERMINATE).fetchall()
            killed.append(sum(1 for (done,) in rows if done))
            stop.wait(rng.uniform(0.002, 0.03))


@dataclass
class UnderFire:
    acknowledged: list[str]  # ids of messages append returned
    raised: list[BaseException]
    committed: list[str]  # compactions reported committed
    killed: int  # backends terminated


def append_under_fire(url: str) -> UnderFire:
    """Append (with and without ids), read and compact for RUN_SECONDS while another
    connection terminates the store's backends every few milliseconds."""
    with TranscriptStore.open(url) as setup:
        setup.start(S)
    fire = UnderFire([], [], [], 0)
    stop = threading.Event()
    killed: list[int] = []
    store = TranscriptStore.open(url, lock_timeout=5)
    killer = threading.Thread(target=terminator, args=(url, stop, killed), daemon=True)
    try:
        killer.start()
        deadline = time.monotonic() + RUN_SECONDS
        i = 0
        while time.monotonic() < deadline:
            i += 1
            try:
                with_id = {"id": f"m{i}", "role": "user", "content": f"with id {i}"}
                without_id = {"role": "assistant", "content": f"without id {i}"}
                stored = store.append(S, [with_id, without_id])
                fire.acknowledged += [m["id"] for m in stored]
                if i % 3 == 0:
                    store.active(S)
                    store.history(S)
                    store.sessions()
                if i % 10 == 0:
                    result = store.compact(S, summarize, reason="under fire")
                    if result.committed:
                        fire.committed.append(result.compaction_id)
                    else:
                        assert result.failure in ("storage_error", "conflict"), result
            except Exception as error:  # noqa: BLE001 - every one is checked by the tests
                fire.raised.append(error)
    finally:
        stop.set()
        killer.join(10)
        store.close()
    fire.killed = sum(killed)
    assert fire.killed > 0, "the terminator never terminated a connection"
    return fire


def test_connections_terminated_during_calls_lose_and_duplicate_nothing_on_postgres(
    postgres_url: str,
) -> None:
    fire = append_under_fire(postgres_url)
    untyped = [e for e in fire.raised if not isinstance(e, TranscriptError)]
    assert untyped == [], [f"{type(e).__module__}.{type(e).__name__}: {e}" for e in untyped[:5]]
    with TranscriptStore.open(postgres_url) as reader:
        history = reader.history(S)
        counts = Counter(entry["id"] for entry in history)
        assert [i for i, n in counts.items() if n > 1] == []
        assert [i for i in fire.acknowledged if i not in counts] == [], "acknowledged, then lost"
        contents = Counter(
            entry["message"].get("content")
            for entry in history
            if entry["message"]["role"] == "assistant"
        )
        doubled = [content for content, n in contents.items() if n > 1]
        assert doubled == [], f"a message without an id stored twice: {doubled[:5]}"
        audit = {entry["id"]: entry["status"] for entry in reader.compactions(S)}
        assert all(audit.get(c) == "committed" for c in fire.committed)
        report = reader.verify_projections()
        assert report.ok, report.problems[:5]


def test_dropped_postgres_connections_are_retried_until_the_lock_timeout(
    postgres_url: str,
) -> None:
    fire = append_under_fire(postgres_url)
    kinds = Counter(f"{type(e).__name__}: {' '.join(str(e).split())[:120]}" for e in fire.raised)
    assert fire.raised == [], f"{len(fire.raised)} calls raised: {kinds.most_common(5)}"
