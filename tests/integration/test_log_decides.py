"""The log alone decides what a write stores: which ids are stored, with what content, which
are rewound. A view row lost, altered or stale — a damaged page, a bad migration, plain SQL
— can make a write slower, never make it store a second event for an id, bring a superseded
id back, restore an active one, or refuse a valid write; `verify` reports the damage and a
rebuild repairs it, quarantining nothing. The write side's own index of message ids, kept in
the log's transactions, is checked against the log by `verify` and rebuilt from it too.

Each case writes a session with every kind of stored message, damages the views with plain
SQL, and writes again from a store opened afresh (resumed, as a new process) and from the
store that wrote it (its transcript in memory). Run on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest

from support.log import fold_of, log_events
from support.messages import summary, turns
from support.rows import damage_event, log_rows, query, stream_key
from transcripts import (
    MessageConflictError,
    StorageError,
    TranscriptStore,
    VersionConflictError,
)
from transcripts.adapters.storage.sql.log_index import STORED_TOPICS, VERSION_KEY, LogIndex
from transcripts.domain.transcript import Transcript, transcript_id

S = "damaged"
IDS = "log_message_ids"
FUTURE_TOPIC = "transcripts:Transcript.FutureEvent"


def written(store: TranscriptStore) -> dict[str, Any]:
    """A session with an active, a superseded, a summary and a rewound message."""
    store.start(S)
    stored = store.append(S, [{"id": f"m{i}", **turn} for i, turn in enumerate(turns(6))])
    result = store.compact(S, lambda live: [summary(), *live[-3:]])
    assert result.committed
    (rewound,) = store.rewind(S, count=1)
    return {
        "active": stored[3],
        "superseded": stored[0],
        "summary": result.messages[0],
        "rewound": rewound,
    }


def lose(url: str, message_id: str) -> None:
    query(
        url, "DELETE FROM message_history WHERE session_id = ? AND message_id = ?", (S, message_id)
    )


def alter(url: str, message: dict[str, Any]) -> None:
    altered = {**message, "content": "altered by plain SQL"}
    query(
        url,
        "UPDATE message_history SET message = ? WHERE session_id = ? AND message_id = ?",
        (json.dumps(altered), S, message["id"]),
    )


def mark_rewound(url: str, message_id: str) -> None:
    query(
        url,
        "UPDATE message_history SET active = ?, superseded_by = NULL, rewound_version = 3, "
        "position = NULL WHERE session_id = ? AND message_id = ?",
        (_false(url), S, message_id),
    )


def _false(url: str) -> object:
    return 0 if url.startswith("sqlite") else False


DAMAGE: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "its history row lost": lambda url, message: lose(url, message["id"]),
    "its history row altered": alter,
    "its history row marked rewound": lambda url, message: mark_rewound(url, message["id"]),
}


def appended_events(url: str) -> int:
    return sum(isinstance(e, Transcript.MessageAppended) for e in log_events(url, S))


@pytest.mark.parametrize("damage", DAMAGE)
@pytest.mark.parametrize("kind", ["active", "superseded", "summary"])
@pytest.mark.parametrize("writer", ["a store opened afresh", "the store that wrote it"])
def test_a_stored_id_appended_again_stores_nothing_whatever_its_view_row_says(
    durable_url: str, kind: str, damage: str, writer: str
) -> None:
    with TranscriptStore.open(durable_url) as first:
        stored = written(first)
        message = stored[kind]
        DAMAGE[damage](durable_url, message)
        rows = log_rows(durable_url)
        store = TranscriptStore.open(durable_url) if writer == "a store opened afresh" else first
        try:
            assert store.append(S, [message]) == [message]
            store.sync(S, [message, *turns(1, prefix="new")])
        finally:
            if store is not first:
                store.close()
    assert log_rows(durable_url)[: len(rows)] == rows
    assert appended_events(durable_url) == 6 + 1  # the new message alone
    fold = fold_of(durable_url, S)  # no id appended twice: the fold would refuse it
    assert (message["id"] in fold.active_ids) == (kind != "superseded")


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_rewound_id_is_restored_once_whatever_its_view_row_says(
    durable_url: str, damage: str
) -> None:
    with TranscriptStore.open(durable_url) as first:
        rewound = written(first)["rewound"]
    DAMAGE[damage](durable_url, rewound)
    with TranscriptStore.open(durable_url) as store:
        store.sync(S, [rewound])  # sync never restores
        assert appended_events(durable_url) == 6
        store.append(S, [rewound])
        store.append(S, [rewound])  # active now: a no-op
    assert appended_events(durable_url) == 7
    assert fold_of(durable_url, S).active_ids[-1] == rewound["id"]


def test_the_log_decides_a_conflict_whatever_content_the_views_show(durable_url: str) -> None:
    with TranscriptStore.open(durable_url) as first:
        active = written(first)["active"]
    alter(durable_url, active)
    altered = {**active, "content": "altered by plain SQL"}
    with TranscriptStore.open(durable_url) as store:
        assert store.append(S, [active]) == [active]  # what the log holds: a no-op
        with pytest.raises(MessageConflictError):
            store.append(S, [altered])  # what the view shows: another content
    assert appended_events(durable_url) == 6


def test_after_view_damage_a_rebuild_repairs_the_views_and_quarantines_nothing(
    durable_url: str,
) -> None:
    with TranscriptStore.open(durable_url) as first:
        stored = written(first)
    for damage, kind in zip(DAMAGE.values(), ["active", "superseded", "summary"], strict=True):
        damage(durable_url, stored[kind])
    with TranscriptStore.open(durable_url) as store:
        assert not store.verify_projections().ok
        store.sync(S, [stored[kind] for kind in ("active", "superseded", "summary", "rewound")])
        store.rebuild_projections()
        report = store.verify_projections()
        assert report.ok, report.problems
        assert store.projection_status()[0].quarantined == 0
        assert store.active(S) == fold_of(durable_url, S).active()
        store.append(S, turns(1, prefix="after"))  # the session is well
        assert store.verify_projections().ok


def test_verify_reports_a_damaged_index_of_message_ids_and_a_rebuild_repairs_it(
    durable_url: str,
) -> None:
    with TranscriptStore.open(durable_url) as first:
        stored = written(first)
    # every id of the index lost, the versions it reflects kept
    query(durable_url, f"DELETE FROM {IDS} WHERE id_key <> ?", (VERSION_KEY,))
    with TranscriptStore.open(durable_url) as store:
        report = store.verify_projections()
        assert {(p.view, p.kind) for p in report.problems} == {("log_message_ids", "missing")}
        assert {p.key for p in report.problems} == {f"m{i}" for i in range(6)} | {
            stored["summary"]["id"]
        }
        store.rebuild_projections()
        assert store.verify_projections().ok
        store.append(S, [stored["active"], stored["superseded"]])  # replayed: no-ops
    assert appended_events(durable_url) == 6
    with TranscriptStore.open(durable_url) as store:
        assert store.verify_projections().ok  # the write indexed the session anew


def test_a_session_written_without_the_index_is_indexed_by_its_next_write(
    durable_url: str,
) -> None:
    """Events stored by a writer that keeps no index (an older release, the event-sourcing
    library alone) count as the log holds them: the next write indexes them."""
    with TranscriptStore.open(durable_url) as first:
        stored = written(first)
    stream = transcript_id(S)
    key = stream.hex if durable_url.startswith("sqlite") else stream
    query(durable_url, "DELETE FROM log_message_ids WHERE stream_id = ?", (key,))
    query(durable_url, "DELETE FROM log_streams WHERE stream_id = ?", (key,))
    with TranscriptStore.open(durable_url) as store:
        assert store.verify_projections().ok  # a session not indexed yet is no damage
        store.append(S, [stored["superseded"], stored["active"]])
        with pytest.raises(MessageConflictError):
            store.append(S, [{**stored["summary"], "content": "other"}])
        assert store.verify_projections().ok
    assert appended_events(durable_url) == 6


def test_a_store_keyed_as_the_release_before_reindexes_its_message_ids_once_on_open(
    durable_url: str,
) -> None:
    """The release before keyed the index by each id's SHA-256 and recorded no key version:
    opening drops that index once; each session's next write indexes it anew from its log."""
    with TranscriptStore.open(durable_url) as first:
        stored = written(first)
    key = stream_key(durable_url, S)
    for (new,) in query(durable_url, f"SELECT id_key FROM {IDS} WHERE stream_id = ?", (key,)):
        query(
            durable_url,
            f"UPDATE {IDS} SET id_key = ? WHERE stream_id = ? AND id_key = ?",
            (hashlib.sha256(bytes(new)).digest(), key, bytes(new)),
        )
    query(durable_url, "DELETE FROM store_settings WHERE name = 'message_id_keys'")
    with TranscriptStore.open(durable_url) as store:
        assert query(durable_url, f"SELECT COUNT(*) FROM {IDS}") == [(0,)]
        assert store.verify_projections().ok
        version = store.version(S)
        store.append(S, [stored["active"], stored["superseded"]], expected_version=version)
        with pytest.raises(MessageConflictError):
            store.append(S, [{**stored["summary"], "content": "other"}])
        with pytest.raises(VersionConflictError):
            store.append(S, turns(1, prefix="late"), expected_version=version - 1)
        store.append(S, turns(1, prefix="after"), expected_version=version)
        indexed = query(durable_url, f"SELECT COUNT(*) FROM {IDS}")
        assert indexed == [(9,)]  # six, the summary, the one after; the version
    assert appended_events(durable_url) == 7
    with TranscriptStore.open(durable_url) as store:  # once: its keys are this release's now
        assert query(durable_url, f"SELECT COUNT(*) FROM {IDS}") == indexed
        assert store.verify_projections().ok


def test_a_stream_whose_version_the_release_before_kept_apart_resumes_from_it(
    durable_url: str,
) -> None:
    """The release before kept the version the index reflects in `log_streams`: it is read
    until the stream's next write, which writes the version beside the ids."""
    with TranscriptStore.open(durable_url) as first:
        stored = written(first)
        version = first.version(S)
    key = stream_key(durable_url, S)

    def kept_apart(reflected: int) -> None:
        query(
            durable_url, f"DELETE FROM {IDS} WHERE stream_id = ? AND id_key = ?", (key, VERSION_KEY)
        )
        query(durable_url, "DELETE FROM log_streams WHERE stream_id = ?", (key,))
        query(durable_url, "INSERT INTO log_streams VALUES (?, ?)", (key, reflected))

    kept_apart(version - 1)
    with TranscriptStore.open(durable_url) as store:  # the version read is checked
        assert {(p.view, p.kind) for p in store.verify_projections().problems} == {(IDS, "changed")}
    kept_apart(version)
    with TranscriptStore.open(durable_url) as store:
        assert store.verify_projections().ok
        store.append(S, [stored["active"], stored["superseded"]])
        with pytest.raises(MessageConflictError):
            store.append(S, [{**stored["summary"], "content": "other"}])
        store.append(S, turns(1, prefix="after"))
        assert query(
            durable_url,
            f"SELECT content_hash FROM {IDS} WHERE stream_id = ? AND id_key = ?",
            (key, VERSION_KEY),
        ) == [((version + 1).to_bytes(8, "big"),)]
        assert store.verify_projections().ok
    assert appended_events(durable_url) == 7


@pytest.mark.parametrize("version", [3, 9], ids=["an event in the middle", "the last event"])
@pytest.mark.parametrize("writer", ["a store opened afresh", "the store that wrote it"])
def test_an_event_of_an_unknown_topic_stops_every_write_to_its_session(
    durable_url: str, version: int, writer: str
) -> None:
    """No rebuild, no view telling: the topic alone is found by the log's index of them."""
    with TranscriptStore.open(durable_url) as first:
        stored = written(first)
        first.start("other")
        damage_event(durable_url, S, version, topic=FUTURE_TOPIC)
        rows = log_rows(durable_url)
        store = TranscriptStore.open(durable_url) if writer == "a store opened afresh" else first
        try:
            for write in (
                lambda: store.append(S, turns(1)),
                lambda: store.sync(S, turns(1)),
                lambda: store.append(S, [stored["rewound"]]),
                lambda: store.start(S),
                lambda: store.rewind(S, count=1),
            ):
                with pytest.raises(StorageError, match=f"version {version}"):
                    write()
            store.append("other", turns(1))  # other sessions write as ever
            assert log_rows(durable_url)[: len(rows)] == rows
            store.forget(S)  # erases it, that event included
        finally:
            if store is not first:
                store.close()


def test_a_sqlite_store_trades_the_index_of_unknown_topics_of_the_release_before_on_open(
    sqlite_url: str,
) -> None:
    """The release before's index of unknown topics (`topic NOT IN (…)`, which SQLite
    evaluates at a cost for each event inserted) is dropped on open; the chain of `<>`
    that takes its place still finds an unknown topic with a look-up in its session."""
    with TranscriptStore.open(sqlite_url) as first:
        written(first)
    like = ("stored_events_unknown_topics_%",)
    listed = "SELECT name FROM sqlite_master WHERE name LIKE ?"
    ((current,),) = query(sqlite_url, listed, like)
    topics = ", ".join(f"'{topic}'" for topic in STORED_TOPICS)
    query(sqlite_url, f'DROP INDEX "{current}"')
    query(
        sqlite_url,
        "CREATE INDEX stored_events_unknown_topics_4c90dbca ON stored_events "
        f"(originator_id, originator_version) WHERE topic NOT IN ({topics})",
    )
    damage_event(sqlite_url, S, 3, topic=FUTURE_TOPIC)
    with TranscriptStore.open(sqlite_url) as store:
        assert query(sqlite_url, listed, like) == [(current,)]
        with pytest.raises(StorageError, match="version 3"):
            store.append(S, turns(1))
    index = LogIndex("stored_events", stream_key=str, flag=int, cipher=None, chained_topics=True)
    statement, params = index.state_statement(transcript_id(S))
    plan = query(sqlite_url, f"EXPLAIN QUERY PLAN {statement}", params)
    assert any(current in str(step) for step in plan)  # its look-up, no scan of the stream
