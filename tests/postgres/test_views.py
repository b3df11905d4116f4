"""The views on PostgreSQL: the same public schema as on SQLite, plain SQL, rebuild, quarantine."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from support.postgres import EVENTS_TABLE, connect, sql
from support.rows import ORDERED_TABLES, head, row_counts, tracked
from transcripts import MAX_ID_LENGTH, StorageError, TranscriptStore
from transcripts.adapters.storage.postgres.advisory import advisory_key

PUBLIC_TABLES = tuple(ORDERED_TABLES)  # every table a projection writes


def write_some(store: TranscriptStore) -> None:
    store.start("s1", source="cli", model="m")
    store.start("s2")
    store.append("s1", [{"id": f"a{i}", "role": "user", "content": f"hi {i}"} for i in range(4)])
    store.append("s2", [{"id": "b1", "role": "user", "content": [{"type": "text", "text": "x"}]}])
    store.compact("s1", lambda messages: [{"role": "system", "content": "summary"}, messages[-1]])


def test_the_view_tables_have_the_same_names_and_columns_in_the_same_order_as_on_sqlite(
    postgres_url: str, tmp_path: Path
) -> None:
    TranscriptStore.open(postgres_url).close()
    sqlite_file = tmp_path / "store.db"
    TranscriptStore.open(f"sqlite:///{sqlite_file}").close()
    with closing(sqlite3.connect(sqlite_file)) as db:
        on_sqlite = {
            table: [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
            for table in PUBLIC_TABLES
        }
    on_postgres = {
        table: [
            name
            for (name,) in sql(
                postgres_url,
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = 'public' AND table_name = %s ORDER BY ordinal_position",
                (table,),
            )
        ]
        for table in PUBLIC_TABLES
    }
    assert on_postgres == on_sqlite
    assert all(on_postgres.values())


def test_the_active_messages_table_of_an_older_release_becomes_a_view_of_the_history_on_open(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url) as store:
        write_some(store)
        active = store.active("s1")
    for statement in (  # the views as the release before wrote them
        "DROP VIEW active_messages",
        "CREATE TABLE active_messages AS SELECT session_id, position, message_id, role, message "
        "FROM message_history WHERE position IS NOT NULL",
        "ALTER TABLE message_history DROP COLUMN position",
        "CREATE INDEX message_history_session_id_hash ON message_history USING hash (session_id)",
        "UPDATE view_versions SET version = 2 WHERE view = 'active_messages'",
        "UPDATE view_versions SET version = 3 WHERE view = 'message_history'",
    ):
        sql(postgres_url, statement)
    with TranscriptStore.open(postgres_url) as store:  # rebuilt on open
        assert store.active("s1") == active
        assert store.verify_projections().ok
        store.append("s1", [{"id": "after", "role": "user", "content": "after the upgrade"}])
        assert [m["id"] for m in store.active("s1")] == [*(m["id"] for m in active), "after"]
    [(kind,)] = sql(
        postgres_url, "SELECT relkind::text FROM pg_class WHERE relname = 'active_messages'"
    )
    assert kind == "v"
    indexes = {name for (name,) in sql(postgres_url, "SELECT indexname FROM pg_indexes")}
    assert "message_history_position_key" in indexes
    assert "message_history_session_id_hash" not in indexes  # not kept as a user's index
    assert not any("__next" in name for name in indexes)


def test_users_can_query_the_views_with_plain_sql_and_json_operators(postgres_url: str) -> None:
    with TranscriptStore.open(postgres_url) as store:
        write_some(store)
    rows = sql(
        postgres_url,
        "SELECT role, message->>'content' FROM active_messages "
        "WHERE session_id = 's1' ORDER BY position",
    )
    assert rows == [("system", "summary"), ("user", "hi 3")]
    [(active, superseded_by)] = sql(
        postgres_url,
        "SELECT active, superseded_by IS NOT NULL FROM message_history "
        "WHERE session_id = 's1' AND message_id = 'a0'",
    )
    assert (active, superseded_by) == (False, True)
    [(started_at_is_a_time,)] = sql(
        postgres_url,
        "SELECT pg_typeof(started_at)::text = 'timestamp with time zone' FROM sessions LIMIT 1",
    )
    assert started_at_is_a_time


def test_a_plain_sql_reader_naming_the_session_digest_reads_the_active_context_by_its_key(
    postgres_url: str,
) -> None:
    """The README's PostgreSQL query: `transcripts_id_key(session_id)` beside the id finds a
    session's active rows through the position key, where the id alone reads the table."""
    with TranscriptStore.open(postgres_url) as store:
        write_some(store)
    query = (
        "SELECT role, message->>'content' FROM active_messages WHERE session_id = 's1' "
        "AND transcripts_id_key(session_id) = transcripts_id_key('s1') ORDER BY position"
    )
    assert sql(postgres_url, query) == [("system", "summary"), ("user", "hi 3")]
    with connect(postgres_url) as connection:
        connection.execute("SET enable_seqscan = off")  # the table is too small to need it
        plan = "\n".join(row[0] for row in connection.execute(f"EXPLAIN {query}"))
    lines = plan.splitlines()
    [scan] = [n for n, line in enumerate(lines) if "using message_history_position_key" in line]
    assert "Index Cond:" in lines[scan + 1] and "session_id" in lines[scan + 1]  # its entries
    assert "position_base" in plan  # the rows above the session's base


def test_a_rebuild_keeps_the_rows_the_constraint_names_and_the_indexes_users_made(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url) as store:
        write_some(store)
        sql(postgres_url, "CREATE INDEX by_role ON message_history (role)")
        indexes_before = sql(
            postgres_url, "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1"
        )
        rows_before = sql(postgres_url, "SELECT * FROM message_history ORDER BY session_id, seq")
        assert store.rebuild_projections() == head(postgres_url)
        assert store.rebuild_projections() == head(postgres_url)  # twice: no name drifts
        assert (
            sql(postgres_url, "SELECT * FROM message_history ORDER BY session_id, seq")
            == rows_before
        )
        indexes = sql(
            postgres_url, "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1"
        )
        assert indexes == indexes_before
        assert ("by_role",) in indexes
        assert tracked(postgres_url) == head(postgres_url)
        assert store.verify_projections().ok


# A row that repeats one of each table's keys (the columns SQLite makes keys of), as raw SQL.
DUPLICATES = {
    "sessions (session id)": "INSERT INTO sessions SELECT session_id, md5(transcript_id), "
    "source, model, parent_id, metadata, started_at, last_event_at, version, message_count, "
    "active_count, compactions_committed, compactions_failed, quarantined, erased_at, "
    "rewound_count, state, context_version, position_base FROM sessions WHERE session_id = %s",
    "active_messages (session, position)": "INSERT INTO message_history SELECT session_id, "
    "seq + 1000, message_id || '-other', role, message, active, superseded_by, added_by, "
    "appended_at, appended_version, rewound_version, restored_version, position, log_position "
    "FROM message_history WHERE session_id = %s AND position IS NOT NULL",
    "message_history (session, seq)": "INSERT INTO message_history SELECT session_id, seq, "
    "message_id || '-other', role, message, active, superseded_by, added_by, appended_at, "
    "appended_version, rewound_version, restored_version, NULL, log_position "
    "FROM message_history WHERE session_id = %s",
    "message_history (session, message id)": "INSERT INTO message_history SELECT session_id, "
    "seq + 1000, message_id, role, message, active, superseded_by, added_by, appended_at, "
    "appended_version, rewound_version, restored_version, NULL, log_position "
    "FROM message_history WHERE session_id = %s",
    "compaction_attempts (session, version)": "INSERT INTO compaction_attempts SELECT "
    "compaction_id || '-other', session_id, version, status, reason, failure, error, "
    "based_on_version, superseded_count, added_count, superseded_ids, added_ids, "
    "tokens_before, tokens_after, at, metadata FROM compaction_attempts WHERE session_id = %s",
}


@pytest.mark.parametrize("duplicate", list(DUPLICATES))
def test_a_view_row_repeating_a_key_is_refused_as_on_sqlite_even_with_the_longest_ids(
    postgres_url: str, duplicate: str
) -> None:
    import psycopg

    # Ids of the maximum length in 4-byte characters: too long for a btree entry themselves.
    session = "\U0001f600" * MAX_ID_LENGTH
    with TranscriptStore.open(postgres_url) as store:
        store.start(session)
        store.append(
            session, [{"id": "\U0001f680" * MAX_ID_LENGTH, "role": "user", "content": "a"}]
        )
        store.compact(session, lambda messages: [{"role": "system", "content": "summary"}])
        rows = row_counts(postgres_url)
        with pytest.raises(psycopg.errors.UniqueViolation):
            sql(postgres_url, DUPLICATES[duplicate], (session,))
        assert row_counts(postgres_url) == rows
        assert store.verify_projections().ok


@pytest.mark.parametrize(
    "identifier",
    ["s1", "a\\b", "\\\\", "\\000", "\\x41", "caf\u00e9 \u20ac \U0001f600", "x" * MAX_ID_LENGTH],
    ids=[
        "plain",
        "backslash",
        "two-backslashes",
        "octal-escape",
        "hex-escape",
        "non-ascii",
        "longest",
    ],
)
def test_the_id_key_is_the_sha256_of_the_ids_utf8_bytes_as_the_release_before_computed_it(
    postgres_url: str, identifier: str
) -> None:
    """The keys of a store written by the release before stay valid."""
    TranscriptStore.open(postgres_url).close()
    [(digest, before)] = sql(
        postgres_url,
        "SELECT transcripts_id_key(%s), sha256(convert_to(%s, 'UTF8'))",
        (identifier, identifier),
    )
    assert bytes(digest) == bytes(before) == hashlib.sha256(identifier.encode()).digest()


def inlined(postgres_url: str) -> bool:
    """Whether PostgreSQL inlines the id key (no SQL function call per row)."""
    explain = "EXPLAIN VERBOSE SELECT transcripts_id_key(session_id) FROM sessions"
    plan = "\n".join(line for (line,) in sql(postgres_url, explain))
    return "sha256(" in plan and "transcripts_id_key" not in plan


def test_the_id_key_of_the_release_before_is_replaced_on_open_by_one_postgresql_inlines(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url) as store:
        write_some(store)
        active = store.active("s1")
    assert inlined(postgres_url)
    sql(  # the function as the release before created it
        postgres_url,
        "CREATE OR REPLACE FUNCTION transcripts_id_key(id text) RETURNS bytea "
        "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE "
        "AS $$ SELECT sha256(convert_to(id, 'UTF8')) $$",
    )
    assert not inlined(postgres_url)
    with TranscriptStore.open(postgres_url) as store:
        assert inlined(postgres_url)
        assert store.active("s1") == active and store.verify_projections().ok
        again = {"id": "a0", "role": "user", "content": "hi 0"}  # stored: found by its key
        store.append("s1", [again, {"id": "after", "role": "user", "content": "after"}])
        assert [m["id"] for m in store.active("s1")] == [*(m["id"] for m in active), "after"]


def test_a_store_of_a_release_without_the_id_digest_keys_is_rebuilt_with_them_on_open(
    postgres_url: str,
) -> None:
    """An older release's store: no `transcripts_id_key` function, no keys on it, older
    view versions. Opening it rebuilds the views, which creates them."""
    with TranscriptStore.open(postgres_url) as store:
        write_some(store)
        active = store.active("s1")
    digest_keys = "SELECT indexname FROM pg_indexes WHERE right(indexname, 4) = '_key' ORDER BY 1"
    keys = sql(postgres_url, digest_keys)
    assert ("message_history_message_key",) in keys
    sql(postgres_url, "DROP FUNCTION transcripts_id_key CASCADE")  # and the keys on it
    sql(postgres_url, "UPDATE view_versions SET version = 2 WHERE view = 'message_history'")
    assert sql(postgres_url, digest_keys) == [  # the keys not on digests
        ("message_history_log_position_key",),
        ("sessions_transcript_id_key",),
    ]
    with TranscriptStore.open(postgres_url) as store:
        assert store.active("s1") == active
        assert store.verify_projections().ok
    assert sql(postgres_url, digest_keys) == keys


def test_a_corrupted_stored_event_is_quarantined_and_the_other_sessions_are_projected(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url) as store:
        store.start("good")
        store.start("bad")
        store.append("bad", [{"id": "x", "role": "user", "content": "x"}])
        [(position,)] = sql(
            postgres_url,
            f"SELECT MAX(notification_id) FROM {EVENTS_TABLE}",
        )
        sql(
            postgres_url,
            f"UPDATE {EVENTS_TABLE} SET state = 'not json'::bytea WHERE notification_id = %s",
            (position,),
        )
        store.append("good", [{"id": "g", "role": "user", "content": "fine"}])
        assert store.rebuild_projections() == head(postgres_url)
        assert [m["id"] for m in store.active("good")] == ["g"]
        with pytest.raises(StorageError, match=r"a stored event is corrupt \(version 2: "):
            store.active("bad")  # its views lack the event
        [quarantined] = sql(postgres_url, "SELECT position, session_id FROM quarantined_events")
        assert quarantined == (position, "bad")
        report = store.verify_projections()
        assert [problem.kind for problem in report.problems] == ["quarantined"]
        assert {s["id"]: s["quarantined"] for s in store.sessions()} == {"good": 0, "bad": 1}
    assert row_counts(postgres_url)["message_history"] == 1


def test_an_append_whose_message_the_views_refuse_is_stored_and_its_event_quarantined(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url, lock_timeout=2) as store:
        store.start("s")
        store.append("s", [{"id": "m1", "role": "user", "content": "fine"}])
        sql(  # a constraint a user added: the write's own projection cannot take the row
            postgres_url,
            "ALTER TABLE message_history ADD CONSTRAINT refused "
            "CHECK (message_id IS DISTINCT FROM 'm2')",
        )
        store.append("s", [{"id": "m2", "role": "user", "content": "refused"}])
        store.append("s", [{"id": "m3", "role": "user", "content": "fine again"}])
        assert [event["version"] for event in store.events("s")] == [1, 2, 3, 4]
        with pytest.raises(StorageError, match=r"version 3: the views could not take it"):
            store.active("s")
        [(session, version)] = sql(
            postgres_url, "SELECT session_id, version FROM quarantined_events"
        )
        assert (session, version) == ("s", 3)
        assert tracked(postgres_url) == head(postgres_url)


def test_a_write_that_finds_the_views_busy_leaves_them_to_the_next_read_and_does_not_wait(
    postgres_url: str,
) -> None:
    key = advisory_key("views", EVENTS_TABLE)  # what a catch-up or a rebuild holds
    with (
        TranscriptStore.open(postgres_url, lock_timeout=1) as store,
        connect(postgres_url) as other,
    ):
        store.start("s")
        other.execute("SELECT pg_advisory_lock(%s)", (key,))
        store.append("s", [{"id": "m1", "role": "user", "content": "while busy"}])
        assert tracked(postgres_url) < head(postgres_url)  # stored, not projected
        other.execute("SELECT pg_advisory_unlock(%s)", (key,))
        assert [m["id"] for m in store.active("s")] == ["m1"]  # the read caught up
        store.append("s", [{"id": "m2", "role": "user", "content": "views free"}])
        assert tracked(postgres_url) == head(postgres_url)


def test_a_compaction_that_finds_the_views_busy_returns_the_active_list_it_made(
    postgres_url: str,
) -> None:
    key = advisory_key("views", EVENTS_TABLE)
    with (
        TranscriptStore.open(postgres_url, lock_timeout=1) as store,
        connect(postgres_url) as other,
    ):
        store.start("s")
        store.append("s", [{"id": f"m{n}", "role": "user", "content": f"{n}"} for n in range(5)])
        attempt = store.begin_compaction("s")
        other.execute("SELECT pg_advisory_lock(%s)", (key,))
        store.append("s", [{"id": "m5", "role": "user", "content": "while busy"}])
        summary = {"role": "system", "content": "summary"}
        result = store.commit_compaction(attempt, [summary, *attempt.messages[-1:]])
        assert tracked(postgres_url) < head(postgres_url)  # stored, not projected
        other.execute("SELECT pg_advisory_unlock(%s)", (key,))
    assert result.committed
    assert [m["content"] for m in result.messages] == ["summary", "4", "while busy"]
    with TranscriptStore.open(postgres_url) as store:
        assert store.active("s") == result.messages


def test_message_history_leaves_room_on_its_pages_so_that_superseding_updates_in_place(
    postgres_url: str,
) -> None:
    """fillfactor 50: the rows a compaction supersedes keep their new versions in their
    pages, also once the views are rebuilt."""
    options = "SELECT reloptions FROM pg_class WHERE relname = 'message_history'"
    with TranscriptStore.open(postgres_url) as store:
        write_some(store)
        assert sql(postgres_url, options) == [(["fillfactor=50"],)]
        store.rebuild_projections()
    assert sql(postgres_url, options) == [(["fillfactor=50"],)]


def test_the_audit_lists_superseded_ids_as_json_written_like_every_other_json_column(
    postgres_url: str,
) -> None:
    """The ids a compaction supersedes are aggregated by the database: as compact JSON as
    the rows the store writes itself (`["a1","a2"]`), in their active order."""
    with TranscriptStore.open(postgres_url) as store:
        write_some(store)
    rows = sql(
        postgres_url, "SELECT superseded_ids::text, added_ids::text FROM compaction_attempts"
    )
    [(superseded, added)] = rows
    assert superseded == '["a0","a1","a2"]' and added.startswith('["msg_')
