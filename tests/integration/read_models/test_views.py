"""The views are plain tables in the store file, kept exactly once: every write is visible to
any reader as soon as it returns, catching up never stores a row twice, and the unique keys
refuse a duplicate row whoever inserts it."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable

import pytest

from support.log import (
    WriterBehindTheViews,
    expected_summary,
    fold_of,
    write_behind_the_views,
)
from support.rows import VIEW_TABLES, connect, head, raw_rows, row_counts, tracked
from transcripts import TranscriptStore
from transcripts.adapters.storage.sql.queries import ARRAY_LENGTH, ARRAY_ROWS

# The public schema of issue 3 (columns users may rely on in plain SQL).
PUBLIC_COLUMNS = {
    "active_messages": {"session_id", "position", "message_id", "role", "message"},
    "message_history": {
        "session_id",
        "seq",
        "message_id",
        "role",
        "message",
        "active",
        "superseded_by",
        "added_by",
        "appended_at",
        "rewound_version",
        "restored_version",
        "position",
    },
    "compaction_attempts": {
        "compaction_id",
        "session_id",
        "status",
        "reason",
        "failure",
        "error",
        "based_on_version",
        "superseded_count",
        "added_count",
        "tokens_before",
        "tokens_after",
        "at",
    },
    "sessions": {
        "session_id",
        "source",
        "model",
        "parent_id",
        "started_at",
        "last_event_at",
        "message_count",
        "active_count",
        "compactions_committed",
        "compactions_failed",
        "rewound_count",
    },
}


def assert_reads_match_the_log(reader: TranscriptStore, url: str, session_id: str) -> None:
    fold = fold_of(url, session_id)
    assert reader.active(session_id) == fold.active()
    assert reader.history(session_id) == fold.history()
    assert reader.compactions(session_id) == fold.compactions
    summaries = {summary["id"]: summary for summary in reader.sessions()}
    assert summaries[session_id] == expected_summary(fold)


def test_every_write_is_read_by_a_second_store_object_on_the_same_file_as_soon_as_it_returns(
    sqlite_url: str, turns
) -> None:
    with TranscriptStore.open(sqlite_url) as writer, TranscriptStore.open(sqlite_url) as reader:
        writes: list[Callable[[], object]] = [
            lambda: writer.start("s", source="cli", model="m", metadata={"k": 1}),
            lambda: writer.append("s", turns(3)),
            lambda: writer.append("s", [{"id": "own", "role": "user", "content": "with an id"}]),
            lambda: writer.sync(
                "s", [*writer.active("s"), {"role": "assistant", "content": "synced"}]
            ),
            lambda: writer.compact(
                "s", lambda messages: [{"role": "system", "content": "sum"}, messages[-1]]
            ),
            lambda: writer.compact("s", lambda messages: 1 / 0),
            lambda: writer.append("s", turns(2, prefix="late")),
        ]
        for write in writes:
            write()
            assert_reads_match_the_log(reader, sqlite_url, "s")
        # and the other way round: the reader writes, the first object reads
        reader.append("s", [{"id": "from-reader", "role": "user", "content": "x"}])
        assert writer.active("s")[-1]["id"] == "from-reader"
        assert_reads_match_the_log(writer, sqlite_url, "s")


def test_a_read_of_a_context_its_views_hold_sees_a_message_written_behind_them_at_once(
    durable_url: str,
) -> None:
    with TranscriptStore.open(durable_url) as store, WriterBehindTheViews(durable_url) as writer:
        store.start("s")
        store.append("s", [{"id": "seen", "role": "user", "content": "projected"}])
        assert [message["id"] for message in store.active("s")] == ["seen"]
        writer.append("s", [{"id": "behind", "role": "assistant", "content": "not yet"}])
        assert [message["id"] for message in store.active("s")] == ["seen", "behind"]


@pytest.mark.parametrize(
    ("count", "size"), [(ARRAY_ROWS + 1, 1), (20, ARRAY_LENGTH // 10)], ids=["rows", "text"]
)
def test_a_context_too_large_for_one_array_is_read_whole_in_order_and_smaller_again(
    sqlite_url: str, count: int, size: int
) -> None:
    ids = [f"m{i}" for i in range(count)]
    with TranscriptStore.open(sqlite_url) as store:
        store.start("s")
        store.append("s", [{"id": i, "role": "user", "content": i * size} for i in ids])
        for _ in range(2):  # found large, then remembered as large
            assert [message["id"] for message in store.active("s")] == ids
        store.compact("s", lambda messages: messages[-1:])
        assert [message["id"] for message in store.active("s")] == ids[-1:]
        store.append("s", [{"id": "after", "role": "user", "content": "small again"}])
        assert [message["id"] for message in store.active("s")] == [ids[-1], "after"]


def test_catching_up_twice_projects_each_event_once_and_stores_no_row_twice(
    sqlite_url: str,
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        store.start("live")
        store.append("live", [{"id": "x", "role": "user", "content": "x"}])
        assert store.active("live")  # a query: the views are caught up to here
        before_head = head(sqlite_url)
        ids = write_behind_the_views(sqlite_url, sessions=3, messages=400, compact_every=150)
        assert tracked(sqlite_url) == before_head < head(sqlite_url)

        assert store.catch_up_projections() == head(sqlite_url) - before_head
        once = raw_rows(sqlite_url)
        assert store.catch_up_projections() == 0
        assert raw_rows(sqlite_url) == once
        assert tracked(sqlite_url) == head(sqlite_url)
        for session_id in ids:
            assert_reads_match_the_log(store, sqlite_url, session_id)
        assert store.verify_projections().ok
    counts = row_counts(sqlite_url)
    assert counts["message_history"] == 1 + 3 * (400 + 400 // 150)  # every message, once
    assert counts["sessions"] == 4


def test_two_store_objects_catching_up_the_same_lagging_views_at_once_store_every_row_once(
    sqlite_url: str,
) -> None:
    first, second = TranscriptStore.open(sqlite_url), TranscriptStore.open(sqlite_url)
    try:
        write_behind_the_views(sqlite_url, sessions=4, messages=1500, compact_every=400)
        behind = head(sqlite_url) - tracked(sqlite_url)
        done: list[int] = []
        barrier = threading.Barrier(2)

        def catch_up(store: TranscriptStore) -> None:
            barrier.wait()
            done.append(store.catch_up_projections())

        threads = [threading.Thread(target=catch_up, args=(store,)) for store in (first, second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sum(done) == behind  # each event was projected by exactly one of them
        assert first.verify_projections().ok
        assert row_counts(sqlite_url)["message_history"] == 4 * (1500 + 1500 // 400)
    finally:
        first.close()
        second.close()


def test_events_offered_again_after_the_tracked_position_is_rewound_store_no_row_twice(
    sqlite_url: str, fill
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
        before = raw_rows(sqlite_url)
        with connect(sqlite_url) as db:
            db.execute(
                "UPDATE tracking SET notification_id = 0 WHERE application_name = 'transcripts'"
            )
        store.catch_up_projections()
        after = raw_rows(sqlite_url)
    for table in ("active_messages", "message_history", "compaction_attempts"):
        assert after[table] == before[table], table
    assert after["tracking"] == before["tracking"]


DUPLICATES = {
    "a message at a taken active position": (
        "INSERT INTO message_history SELECT session_id, seq + 100, message_id || '-copy', role, "
        "message, active, superseded_by, added_by, appended_at, appended_version, "
        "rewound_version, restored_version, position, log_position "
        "FROM message_history WHERE position IS NOT NULL LIMIT 1"
    ),
    "a history message at a new seq": (
        "INSERT INTO message_history SELECT session_id, seq + 100, message_id, role, message, "
        "active, superseded_by, added_by, appended_at, appended_version, rewound_version, "
        "restored_version, NULL, log_position "
        "FROM message_history LIMIT 1"
    ),
    "a history message at a taken seq": (
        "INSERT INTO message_history SELECT session_id, seq, message_id || '-copy', role, message, "
        "active, superseded_by, added_by, appended_at, appended_version, rewound_version, "
        "restored_version, NULL, log_position "
        "FROM message_history LIMIT 1"
    ),
    "a compaction attempt": (
        "INSERT INTO compaction_attempts SELECT * FROM compaction_attempts LIMIT 1"
    ),
    "a session": ("INSERT INTO sessions SELECT * FROM sessions LIMIT 1"),
}


@pytest.mark.parametrize("statement", DUPLICATES.values(), ids=DUPLICATES.keys())
def test_the_unique_keys_of_the_views_reject_a_duplicate_row_inserted_by_hand(
    sqlite_url: str, fill, statement: str
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
    before = raw_rows(sqlite_url)
    with pytest.raises(sqlite3.IntegrityError):
        with connect(sqlite_url) as db:
            db.execute(statement)
    assert raw_rows(sqlite_url) == before


def test_the_view_tables_have_the_documented_public_columns_in_the_store_file(
    sqlite_url: str,
) -> None:
    TranscriptStore.open(sqlite_url).close()
    with connect(sqlite_url) as db:
        for table, columns in PUBLIC_COLUMNS.items():
            present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            assert columns <= present, (table, columns - present)
        kinds = dict(db.execute("SELECT name, type FROM sqlite_master").fetchall())
    assert kinds["active_messages"] == "view"  # of message_history: its rows with a position
    assert {name for name, kind in kinds.items() if kind == "table"} >= {
        *VIEW_TABLES,
        "quarantined_events",
        "stored_events",
    } - {"active_messages"}


def test_users_can_query_the_views_with_plain_sql_by_the_session_id_they_gave(
    sqlite_url: str, fill
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
        active = store.active("alpha")
    with connect(sqlite_url) as db:
        rows = db.execute(
            "SELECT position, message_id, role FROM active_messages "
            "WHERE session_id = 'alpha' ORDER BY position"
        ).fetchall()
        history = db.execute(
            "SELECT message_id, active, superseded_by IS NOT NULL, added_by IS NOT NULL, "
            "rewound_version IS NOT NULL, restored_version IS NOT NULL "
            "FROM message_history WHERE session_id = 'alpha' ORDER BY seq"
        ).fetchall()
        summary = db.execute(
            "SELECT source, model, message_count, active_count, compactions_committed, "
            "compactions_failed, rewound_count FROM sessions WHERE session_id = 'alpha'"
        ).fetchone()
        statuses = db.execute(
            "SELECT status, failure, superseded_count, added_count, tokens_before, tokens_after "
            "FROM compaction_attempts WHERE session_id = 'alpha' ORDER BY at"
        ).fetchall()
    assert rows == [(i + 1, m["id"], m["role"]) for i, m in enumerate(active)]
    assert [row[0] for row in history][:4] == ["a1", "a2", "a3", "a4"]
    assert history[0][1:] == (0, 1, 0, 0, 0)  # superseded by the compaction
    assert history[3][1:] == (1, 0, 0, 0, 0)  # kept
    assert history[4][1:] == (1, 0, 1, 0, 0)  # the summary, added by the compaction
    assert history[5:] == [("a5", 1, 0, 0, 0, 1), ("a6", 0, 0, 0, 1, 0)]  # restored, rewound
    assert summary == ("cli", "model-a", 7, 3, 1, 1, 1)
    assert statuses == [
        ("committed", None, 3, 1, 100, 10),
        ("failed", "summarize_error", 2, 0, None, None),
    ]
