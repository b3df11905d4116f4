"""Opening a PostgreSQL store: its tables, and one clear error when the server says no."""

from __future__ import annotations

import threading
import time

import pytest

from support.postgres import EVENTS_TABLE, TRACKING_TABLE, connect, sql, tables, with_database
from support.rows import ORDERED_TABLES
from transcripts import StorageError, TranscriptStore

STORE_TABLES = {
    EVENTS_TABLE,
    TRACKING_TABLE,
    *ORDERED_TABLES,
    "store_settings",
    "message_search",
    "log_streams",  # the write side's index of message ids
    "log_message_ids",
}


def test_opening_an_empty_database_creates_the_logs_and_the_views_tables(
    postgres_url: str,
) -> None:
    TranscriptStore.open(postgres_url).close()
    assert tables(postgres_url) == STORE_TABLES


def test_a_store_that_has_the_library_tracking_table_of_a_release_before_keeps_it(
    postgres_url: str,
) -> None:
    sql(postgres_url, "CREATE TABLE transcripts_tracking (application_name TEXT)")
    TranscriptStore.open(postgres_url).close()
    assert tables(postgres_url) == {*STORE_TABLES, "transcripts_tracking"}


def test_what_a_store_wrote_is_read_back_after_reopening(postgres_url: str) -> None:
    with TranscriptStore.open(postgres_url) as store:
        store.start("s", source="test", metadata={"cwd": "/tmp"})
        stored = store.append("s", [{"role": "user", "content": "kept"}])
    with TranscriptStore.open(postgres_url) as store:
        assert store.active("s") == stored
        assert [session["metadata"] for session in store.sessions()] == [{"cwd": "/tmp"}]


def test_a_database_that_does_not_exist_is_one_storage_error_and_is_not_created(
    postgres_url: str,
) -> None:
    missing = with_database(postgres_url, "transcripts_no_such_database")
    with pytest.raises(StorageError, match='database "transcripts_no_such_database" does not'):
        TranscriptStore.open(missing)
    rows = sql(
        postgres_url,
        "SELECT 1 FROM pg_database WHERE datname = 'transcripts_no_such_database'",
    )
    assert rows == []


def test_credentials_the_server_refuses_are_one_storage_error_and_nothing_is_written(
    postgres_url: str,
) -> None:
    dbname = postgres_url.rsplit("/", 1)[1]
    host_port = postgres_url.split("@", 1)[1].rsplit("/", 1)[0]
    refused = f"postgresql://no_such_role:wrong@{host_port}/{dbname}"
    with pytest.raises(StorageError, match='role "no_such_role" does not exist') as raised:
        TranscriptStore.open(refused)
    assert "wrong" not in str(raised.value)
    assert tables(postgres_url) == set()


def test_processes_opening_a_new_database_at_once_all_succeed(postgres_url: str) -> None:
    # Threads stand in for processes: each store has its own connections.
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def open_and_write(index: int) -> None:
        try:
            barrier.wait()
            with TranscriptStore.open(postgres_url) as store:
                store.start(f"s{index}")
                store.append(f"s{index}", [{"role": "user", "content": str(index)}])
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=open_and_write, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with TranscriptStore.open(postgres_url) as store:
        assert sorted(s["id"] for s in store.sessions()) == [f"s{i}" for i in range(6)]


def hold_events_lock(url: str, seconds: float) -> threading.Thread:
    """Hold the log's table lock (the one every insert takes) from another connection."""
    locked = threading.Event()

    def run() -> None:
        with connect(url) as connection, connection.transaction():
            connection.execute(f"LOCK TABLE {EVENTS_TABLE} IN EXCLUSIVE MODE")
            locked.set()
            time.sleep(seconds)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert locked.wait(10)
    return thread


def test_an_append_waits_for_the_log_lock_held_less_than_the_lock_timeout(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url, lock_timeout=10) as store:
        store.start("s")
        holder = hold_events_lock(postgres_url, 1.0)
        began = time.monotonic()
        [stored] = store.append("s", [{"id": "m", "role": "user", "content": "during"}])
        waited = time.monotonic() - began
        holder.join()
        assert 0.5 <= waited < 10
        assert store.active("s") == [stored]


def test_an_append_gives_up_with_a_storage_error_when_the_log_stays_locked_past_the_timeout(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url, lock_timeout=1) as store:
        store.start("s")
        holder = hold_events_lock(postgres_url, 6.0)
        began = time.monotonic()
        with pytest.raises(StorageError, match="within 1 s"):
            store.append("s", [{"id": "late", "role": "user", "content": "too late"}])
        assert time.monotonic() - began < 5  # about the timeout, not the library's 10 retries
        holder.join()
        assert store.history("s") == []
        assert [event["type"] for event in store.events("s")] == ["Started"]
