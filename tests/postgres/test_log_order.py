"""The views' order of the log on PostgreSQL: writers whose commits come out of the order of
their notification ids, and readers that ran in between."""

from __future__ import annotations

import threading
import time
from typing import Any
from uuid import UUID

import pytest
from conftest import PostgresServer
from eventsourcing.persistence import IntegrityError
from eventsourcing.postgres import PostgresDatastore

from support.postgres import EVENTS_TABLE, connect, sql
from support.rows import tracked
from transcripts import TranscriptStore
from transcripts.adapters.storage.postgres.advisory import advisory_key, stream_lock_key
from transcripts.adapters.storage.postgres.dialect import PostgresDialect
from transcripts.adapters.storage.postgres.location import parse_url
from transcripts.domain.transcript import transcript_id

INSERT = (
    f"INSERT INTO {EVENTS_TABLE} (originator_id, originator_version, topic, state) "
    "VALUES (%s, %s, %s, %s)"
)


def stored_events(server: PostgresServer) -> list[tuple[Any, ...]]:
    """The events of two sessions, "a" and "b", each started and given one message: both
    Started events first, then a's message, then b's."""
    source = server.database()
    with TranscriptStore.open(source) as store:
        store.start("a")
        store.start("b")
        store.append("a", [{"id": "m-a", "role": "user", "content": "written by a"}])
        store.append("b", [{"id": "m-b", "role": "user", "content": "written by b"}])
    return sql(
        source,
        f"SELECT originator_id, originator_version, topic, state FROM {EVENTS_TABLE} "
        "ORDER BY notification_id",
    )


def insert(url: str, *events: tuple[Any, ...]) -> None:
    """Store `events` in the log as a raw writer does, in one transaction, behind the views."""
    with connect(url) as writer:
        for event in events:
            writer.execute(INSERT, event)


def contents(store: TranscriptStore, session_id: str) -> list[Any]:
    return [message["content"] for message in store.active(session_id)]


def test_a_write_that_took_the_lower_notification_id_but_committed_second_is_projected_once(
    postgres_url: str, postgres_server: PostgresServer
) -> None:
    started_a, started_b, message_a, message_b = stored_events(postgres_server)
    with TranscriptStore.open(postgres_url) as store:
        insert(postgres_url, started_a, started_b)
        store.catch_up_projections()
        with connect(postgres_url) as first, connect(postgres_url) as second:
            first.execute("BEGIN")
            first.execute(INSERT, message_a)  # the lower notification id
            second.execute("BEGIN")
            second.execute(INSERT, message_b)
            second.execute("COMMIT")  # the higher one, committed first
            ids = sql(postgres_url, f"SELECT notification_id FROM {EVENTS_TABLE}")
            assert len(ids) == 3  # b's message is visible, a's is not yet

            with store.following_projections():  # a follower, in between
                time.sleep(0.5)
            assert tracked(postgres_url) == 2  # b's message waits for a's transaction

            first.execute("COMMIT")
        assert store.catch_up_projections() == 2
        assert contents(store, "a") == ["written by a"]
        assert contents(store, "b") == ["written by b"]
        assert [len(store.history(session)) for session in ("a", "b")] == [1, 1]
        assert sorted(hit["session_id"] for hit in store.search("written")) == ["a", "b"]
        assert store.verify_projections().ok
        with store.following_projections():  # and a follower after: nothing twice
            time.sleep(0.3)
        assert contents(store, "a") == ["written by a"]
        assert store.verify_projections().ok


def test_a_read_waits_for_a_transaction_that_took_a_lower_notification_id_to_end(
    postgres_url: str, postgres_server: PostgresServer
) -> None:
    started_a, started_b, message_a, message_b = stored_events(postgres_server)
    with TranscriptStore.open(postgres_url) as store:
        insert(postgres_url, started_a, started_b)
        read: list[Any] = []
        with connect(postgres_url) as first, connect(postgres_url) as second:
            first.execute("BEGIN")
            first.execute(INSERT, message_a)
            second.execute(INSERT, message_b)  # committed on its own
            reader = threading.Thread(target=lambda: read.append(contents(store, "b")))
            reader.start()
            reader.join(0.5)
            assert reader.is_alive()  # b's message is stored: the read does not answer without it
            first.execute("COMMIT")
        reader.join(10)
        assert read == [["written by b"]]
        assert contents(store, "a") == ["written by a"]
        assert store.verify_projections().ok


def test_a_log_of_an_older_release_is_ordered_before_every_new_event(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url) as store:
        store.start("s")
        store.append("s", [{"id": "m1", "role": "user", "content": "one"}])
    with connect(postgres_url) as connection:
        connection.execute(f"UPDATE {EVENTS_TABLE} SET xact = NULL")  # as an older log's rows
    with TranscriptStore.open(postgres_url) as store:
        store.append("s", [{"id": "m2", "role": "user", "content": "two"}])
        store.rebuild_projections()
        assert [message["content"] for message in store.active("s")] == ["one", "two"]


def held_write(store: TranscriptStore, session_id: str) -> Any:
    """A write transaction of the session's stream, as an append opens it (to hold open)."""
    return store.config.backend.writing(store._log, transcript_id(session_id))  # noqa: SLF001


def appended_in_thread(store: TranscriptStore, session_id: str) -> threading.Thread:
    thread = threading.Thread(
        target=store.append, args=(session_id, [{"role": "user", "content": "x"}])
    )
    thread.start()
    return thread


def test_writers_of_different_sessions_do_not_wait_for_each_other(postgres_url: str) -> None:
    with TranscriptStore.open(postgres_url) as store, TranscriptStore.open(postgres_url) as other:
        store.start("a")
        store.start("b")
        with held_write(store, "a") as tx:
            tx.index_state(transcript_id("a"))  # the transaction has begun, its lock held
            writer = appended_in_thread(other, "b")
            writer.join(10)
            assert not writer.is_alive()
        assert [message["content"] for message in other.active("b")] == ["x"]


def test_writers_of_one_session_take_turns(postgres_url: str) -> None:
    with TranscriptStore.open(postgres_url) as store, TranscriptStore.open(postgres_url) as other:
        store.start("a")
        with held_write(store, "a") as tx:
            tx.index_state(transcript_id("a"))
            writer = appended_in_thread(other, "a")
            writer.join(0.5)
            assert writer.is_alive()  # waiting for the session's lock
        writer.join(10)
        assert not writer.is_alive()
        assert [message["content"] for message in store.active("a")] == ["x"]


def test_the_advisory_lock_keys_are_those_the_releases_before_took() -> None:
    """A process of the release before and one of this release exclude each other."""
    session = UUID("e3643f23-df73-50af-a35b-7ff4250bc818")
    assert stream_lock_key(EVENTS_TABLE, session) == 960700352193454435
    assert [advisory_key(purpose, EVENTS_TABLE) for purpose in ("views", "search", "schema")] == [
        -7395585880517651701,
        -5013466271767970512,
        -4679197150858066999,
    ]


def test_writers_of_many_sessions_at_once_beside_a_follower_are_each_projected_once(
    postgres_url: str,
) -> None:
    sessions = [f"s{number}" for number in range(4)]

    def write(session_id: str) -> None:
        with TranscriptStore.open(postgres_url) as writer:
            writer.start(session_id)
            for number in range(25):
                writer.append(session_id, [{"role": "user", "content": f"{number}"}])

    with TranscriptStore.open(postgres_url) as store, store.following_projections():
        writers = [threading.Thread(target=write, args=(session,)) for session in sessions]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(120)
        for session_id in sessions:
            assert contents(store, session_id) == [f"{number}" for number in range(25)]
        assert [len(store.history(session_id)) for session_id in sessions] == [25] * 4
        assert store.verify_projections().ok


def settled_seq_scans(url: str) -> int:
    """The sequential scans of the log's table so far, once every other connection to the
    database has ended (a backend's counts reach the statistics when it exits)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        [(others,)] = sql(
            url,
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        if not others:
            break
        time.sleep(0.05)
    [(scans,)] = sql(
        url,
        "SELECT seq_scan FROM pg_stat_user_tables WHERE relname = %s",
        (EVENTS_TABLE,),
    )
    return scans


def test_reading_a_session_from_current_views_does_not_scan_the_whole_log(
    postgres_url: str,
) -> None:
    reads = 40
    with TranscriptStore.open(postgres_url) as store:
        store.start("s")
        store.append("s", [{"role": "user", "content": f"m{n}"} for n in range(300)])
    before = settled_seq_scans(postgres_url)
    with TranscriptStore.open(postgres_url) as store:
        for _ in range(reads):
            assert len(store.active("s")) == 300
    assert settled_seq_scans(postgres_url) - before < reads // 4


def test_a_mark_at_or_past_the_tracked_one_is_refused_even_where_the_write_does_not_wait(
    postgres_url: str,
) -> None:
    """A log transaction sends the tracked mark with its COMMIT, unanswered: the server
    itself refuses a mark that does not advance, and the transaction with it."""
    TranscriptStore.open(postgres_url).close()  # the tables
    datastore = PostgresDatastore(**parse_url(postgres_url).connection_kwargs())
    dialect = PostgresDialect(datastore, EVENTS_TABLE)
    try:
        with dialect.writing() as c:
            dialect.track(c, "test", (None, 5))
        for mark in [(None, 5), (None, 4)]:
            with pytest.raises(IntegrityError), dialect.writing() as c, dialect.pipelined(c):
                dialect.track(c, "test", (7, 1))  # advanced, then undone with the rest
                dialect.track(c, "test", mark)
        with dialect.writing() as c:
            assert dialect.tracked_mark(c, "test") == (None, 5)
            dialect.track(c, "test", (7, 1))  # a later transaction sorts after
            assert dialect.tracked_mark(c, "test") == (7, 1)
    finally:
        datastore.close()
