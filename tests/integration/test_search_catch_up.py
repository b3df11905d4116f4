"""The search index is a projection that may lag the log: appends do not write it, a search
first indexes what the views hold beyond it, so every message acknowledged before the call
is found; several searchers at once index each message once; an erased session's entries go
and never come back; a follower keeps the index warm."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import ClassVar

import pytest

from support.processes import Child, program
from support.rows import is_sqlite, path_of, query
from transcripts import TranscriptStore
from transcripts.adapters.storage.sql import search_catch_up
from transcripts.adapters.storage.sqlite.search import register_functions
from transcripts.config import new_cipher_key
from transcripts.domain.errors import TranscriptError
from transcripts.projections.projector import Projector

SEARCHERS = 4
OLD_STORE = Path(__file__).parents[1] / "data" / "stores" / "release_compaction_v1.db"


def index_rows(url: str, session_id: str | None = None) -> int:
    """The entries of the search index (of one session), read with plain SQL: on SQLite
    one row of sizes per message indexed (the FTS5 table reads its text from the history)."""
    where = "" if session_id is None else f" WHERE session_id = '{session_id}'"
    if is_sqlite(url):
        entries = "message_search_docsize JOIN message_history ON message_history.rowid = id"
        if session_id is None:
            entries = "message_search_docsize"
        return query(url, f"SELECT COUNT(*) FROM {entries}{where}")[0][0]
    return query(url, f"SELECT COUNT(*) FROM message_search{where}")[0][0]


def check_index(url: str) -> None:
    """FTS5's check of a current index against the text it reads from the history rows
    (SQLite: raises if an entry was deleted that was never indexed, or another's words)."""
    if is_sqlite(url):
        with closing(sqlite3.connect(path_of(url))) as db:
            register_functions(db)
            db.execute("INSERT INTO message_search (message_search) VALUES ('integrity-check')")


def index_lag(store: TranscriptStore) -> int:
    (index,) = [s for s in store.projection_status() if s.view == "message_search"]
    return index.lag


def burst(store: TranscriptStore, session_id: str, count: int) -> list[str]:
    """`count` messages about trams appended in calls of 100; their ids."""
    store.start(session_id)
    ids = []
    for start in range(0, count, 100):
        batch = [
            {"id": f"{session_id}-{n}", "role": "user", "content": f"tram number {n}"}
            for n in range(start, min(count, start + 100))
        ]
        store.append(session_id, batch)
        ids += [message["id"] for message in batch]
    return ids


def test_a_message_appended_just_before_a_search_is_found(store: TranscriptStore) -> None:
    store.start("s")
    store.append("s", [{"role": "user", "content": "the first tram"}])
    assert len(store.search("tram")) == 1
    store.append("s", [{"role": "user", "content": "a second tram, appended just now"}])
    assert [hit["snippet"] for hit in store.search("second")] == [
        "a «second» tram, appended just now"
    ]


def test_appends_leave_the_index_behind_until_a_search_indexes_them(durable_url: str) -> None:
    with TranscriptStore.open(durable_url) as store:
        burst(store, "s", 300)
        assert index_rows(durable_url) == 0 and index_lag(store) > 0
        assert len(store.search("tram", limit=1000)) == 300
        assert index_rows(durable_url) == 300 and index_lag(store) == 0


def test_a_search_in_another_process_right_after_many_appends_finds_them_all(
    durable_url: str, tmp_path: Path
) -> None:
    with TranscriptStore.open(durable_url) as store:
        store.start("warm")
        store.search("tram")  # the index is current, then falls behind
        searcher = Child(tmp_path, "searcher", program("searcher.py", durable_url, "tram"))
        searcher.expect("ready")
        ids = burst(store, "s", 2_500)
    searcher.go()
    assert searcher.result()["found"] == sorted(ids)


def test_several_processes_searching_at_once_all_find_everything_and_index_it_once(
    durable_url: str, tmp_path: Path
) -> None:
    searchers = [
        Child(tmp_path, f"searcher{n}", program("searcher.py", durable_url, "tram"))
        for n in range(SEARCHERS)
    ]
    for searcher in searchers:
        searcher.expect("ready")
    with TranscriptStore.open(durable_url) as store:
        ids = burst(store, "s", 3_000)
    for searcher in searchers:
        searcher.go()
    assert [searcher.result()["found"] for searcher in searchers] == [sorted(ids)] * SEARCHERS
    assert index_rows(durable_url) == 3_000


def test_a_search_beside_a_stream_of_appends_returns_with_what_was_acknowledged_before_it(
    durable_url: str,
) -> None:
    stop = threading.Event()

    def stream() -> None:
        with TranscriptStore.open(durable_url) as writer:
            writer.start("stream")
            while not stop.is_set():
                writer.append("stream", [{"role": "user", "content": "tram " * 50}])

    with TranscriptStore.open(durable_url) as store:
        store.start("s")
        appender = threading.Thread(target=stream)
        appender.start()
        try:
            for n in range(20):
                store.append("s", [{"id": f"m{n}", "role": "user", "content": f"marker{n}"}])
                assert [hit["message_id"] for hit in store.search(f"marker{n}")] == [f"m{n}"]
        finally:
            stop.set()
            appender.join()


def test_a_forgotten_session_leaves_the_index_and_a_later_catch_up_does_not_bring_it_back(
    durable_url: str,
) -> None:
    with TranscriptStore.open(durable_url) as store:
        burst(store, "indexed", 10)
        store.search("tram")
        burst(store, "behind", 10)  # not indexed yet when forgotten
        burst(store, "kept", 10)
        store.forget("indexed")
        store.forget("behind")
        assert index_rows(durable_url, "indexed") == 0
        assert {hit["session_id"] for hit in store.search("tram", limit=100)} == {"kept"}
        assert index_lag(store) == 0
        check_index(durable_url)
        store.rebuild_projections()  # and from scratch
        assert {hit["session_id"] for hit in store.search("tram", limit=100)} == {"kept"}
    assert index_rows(durable_url) == index_rows(durable_url, "kept") == 10
    check_index(durable_url)


def test_messages_appended_after_the_newest_session_is_forgotten_unindexed_are_all_found(
    durable_url: str,
) -> None:
    """The forgotten rows were the table's last, never indexed: on SQLite the new rows
    take their rowids, and the catch-up finds rows by rowid."""
    with TranscriptStore.open(durable_url) as store:
        burst(store, "indexed", 10)
        store.search("tram")
        burst(store, "newest", 10)
        store.forget("newest")
        ids = burst(store, "later", 10)
        assert sorted(hit["message_id"] for hit in store.search("tram", limit=100)) == sorted(
            [f"indexed-{n}" for n in range(10)] + ids
        )
    assert index_rows(durable_url) == 20
    check_index(durable_url)


def test_a_catch_up_of_many_batches_indexes_every_row_once_across_forgets_and_compactions(
    durable_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches of three log positions: each batch finds its own rows, above the highest
    indexed, whatever was forgotten or compacted before it."""
    monkeypatch.setattr(search_catch_up, "POSITIONS_PER_BATCH", 3)
    with TranscriptStore.open(durable_url) as store:
        first = burst(store, "first", 7)
        forgotten_indexed = burst(store, "forgotten-indexed", 5)
        store.search("tram")
        burst(store, "forgotten-unindexed", 4)
        store.forget("forgotten-unindexed")
        store.forget("forgotten-indexed")
        compacted = burst(store, "compacted", 9)
        store.compact("compacted", lambda messages: messages[-2:])
        last = burst(store, "last", 4)
        hits = [hit["message_id"] for hit in store.search("tram", limit=1000)]
    assert sorted(hits) == sorted(first + compacted + last)  # superseded ones too
    assert not set(hits) & set(forgotten_indexed)
    assert index_rows(durable_url) == len(first) + len(compacted) + len(last)
    check_index(durable_url)


def test_a_store_whose_index_kept_a_copy_of_the_text_is_rebuilt_on_open_and_searched(
    tmp_path: Path,
) -> None:
    """The release before kept each message's text in the index too (FTS5's own content
    table); its store's index is made again, reading the text from the history rows."""
    path = tmp_path / "old.db"
    shutil.copyfile(OLD_STORE, path)
    url = f"sqlite:///{path}"
    with TranscriptStore.open(url) as store:
        assert [(hit["message_id"], hit["snippet"]) for hit in store.search("summarizing")] == [
            ("late", "appended while «summarizing»")
        ]
        assert [hit["message_id"] for hit in store.search('"later 3"')] == ["q3"]
        store.forget("plan")
        assert store.search("summarizing OR later") == []
    assert query(url, "SELECT name FROM sqlite_master WHERE name LIKE 'message_search%'") == [
        ("message_search",),
        ("message_search_data",),
        ("message_search_idx",),
        ("message_search_docsize",),
        ("message_search_config",),
        ("message_search_text",),
    ]
    check_index(url)


def test_following_the_log_keeps_the_index_up_to_date(durable_url: str) -> None:
    with TranscriptStore.open(durable_url) as store, store.following_projections():
        burst(store, "s", 200)
        deadline = time.monotonic() + 30
        while index_lag(store) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert index_lag(store) == 0
        assert index_rows(durable_url) == 200


def test_a_store_whose_views_are_of_the_previous_versions_is_rebuilt_once_on_open(
    durable_url: str,
) -> None:
    class Previous(Projector):
        VERSIONS: ClassVar[dict[str, int]] = {
            **Projector.VERSIONS,
            "message_history": Projector.VERSIONS["message_history"] - 1,
            "compaction_attempts": Projector.VERSIONS["compaction_attempts"] - 1,
        }

    with TranscriptStore.open(durable_url, projector=Previous) as store:
        burst(store, "s", 20)
    with TranscriptStore.open(durable_url) as store:
        assert dict(query(durable_url, "SELECT view, version FROM view_versions")) == (
            Projector.VERSIONS
        )
        assert len(store.search("tram", limit=100)) == 20
    with TranscriptStore.open(durable_url) as store:  # once: a rebuild would empty the index
        assert index_lag(store) == 0 and index_rows(durable_url) == 20


def test_an_encrypted_store_still_refuses_to_search_and_shows_no_index(store_url: str) -> None:
    with TranscriptStore.open(store_url, cipher_key=new_cipher_key()) as store:
        store.start("s")
        store.append("s", [{"role": "user", "content": "a secret tram"}])
        with pytest.raises(TranscriptError, match="not available on an encrypted store"):
            store.search("tram")
        assert "message_search" not in [status.view for status in store.projection_status()]
