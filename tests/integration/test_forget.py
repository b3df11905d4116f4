"""`forget`: a session's content is erased for good; the audit keeps that it existed and when
it was erased. On every backend; the bytes of the database files are checked on SQLite, the
rows on PostgreSQL."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from support.hermes import Release
from support.reads import seen
from support.rows import path_of, query
from transcripts import Erasure, SessionErasedError, SessionNotFoundError, TranscriptStore
from transcripts.adapters.importers.hermes import import_hermes
from transcripts.application.storage import StoreConfig

MARKER = "zqxmarker7f3a"  # in every kind of content a session holds, and nowhere else
SECRET = "secret"
OTHER = "other"


def fill_secret(store: TranscriptStore, session_id: str = SECRET) -> None:
    """A session holding MARKER in its metadata, a message, tool arguments, a large message,
    a compaction summary and reason, a failure's error and reason, and superseded messages."""
    store.start(
        session_id,
        source="agent",
        model="model-x",
        parent_id=OTHER,
        metadata={"user": f"ann {MARKER}"},
    )
    store.append(
        session_id,
        [
            {"id": "m1", "role": "user", "content": f"my address is {MARKER} street"},
            {
                "id": "m2",
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": f'{{"q": "{MARKER}"}}'},
                    }
                ],
            },
            {"id": "m3", "role": "tool", "tool_call_id": "call_1", "content": "found"},
            {"id": "m4", "role": "user", "content": f"{MARKER} " * 3000},  # overflow pages
        ],
    )
    attempt = store.begin_compaction(session_id)
    store.fail_compaction(attempt, f"timeout {MARKER}", reason=f"budget {MARKER}")
    store.compact(
        session_id,
        lambda messages: [{"role": "system", "content": f"summary of {MARKER}"}],
        reason=f"over budget {MARKER}",
    )
    store.append(session_id, [{"id": f"t{i}", "role": "user", "content": f"turn {i} {MARKER}"}
                              for i in range(200)])  # fmt: skip


def fill_other(store: TranscriptStore) -> dict[str, Any]:
    store.start(OTHER, source="agent", metadata={"user": "bob"})
    store.append(OTHER, [{"id": "o1", "role": "user", "content": "nothing to hide"}])
    store.compact(OTHER, lambda messages: [{"role": "system", "content": "short"}], reason="r")
    return seen(store, OTHER)


@pytest.fixture
def forgotten(store: TranscriptStore) -> tuple[Erasure, dict[str, Any]]:
    """SECRET filled and forgotten, OTHER intact; the erasure and OTHER's reads before it."""
    other = fill_other(store)
    fill_secret(store)
    return store.forget(SECRET), other


def test_forget_replaces_the_events_of_a_session_by_one_tombstone_with_its_counts(
    store: TranscriptStore, forgotten: tuple[Erasure, dict[str, Any]]
) -> None:
    erasure, _ = forgotten
    assert (erasure.session_id, erasure.messages, erasure.events) == (SECRET, 205, 207)
    assert (erasure.compactions_committed, erasure.compactions_failed) == (1, 1)
    assert not erasure.already_erased
    [tombstone] = store.events(SECRET)
    assert tombstone == {
        "version": 208,
        "type": "Erased",
        "at": erasure.erased_at,
        "data": {
            "session_id": SECRET,
            "source": "agent",
            "model": "model-x",
            "started_at": erasure.started_at,
            "messages": 205,
            "compactions_committed": 1,
            "compactions_failed": 1,
        },
    }
    assert erasure.started_at < erasure.erased_at


def test_sessions_lists_a_forgotten_session_with_its_erasure_time_and_nothing_stored(
    store: TranscriptStore, forgotten: tuple[Erasure, dict[str, Any]]
) -> None:
    erasure, _ = forgotten
    summary = {session["id"]: session for session in store.sessions()}[SECRET]
    assert summary == {
        "id": SECRET,
        "source": "agent",
        "model": "model-x",
        "parent_id": None,
        "metadata": {},
        "started_at": erasure.started_at,
        "last_event_at": erasure.erased_at,
        "version": 208,
        "messages": 0,
        "active": 0,
        "compactions_committed": 0,
        "compactions_failed": 0,
        "quarantined": 0,
        "erased_at": erasure.erased_at,
        "rewound": 0,
        "state": {},
    }


def test_every_read_of_a_forgotten_session_content_says_when_it_was_erased(
    store: TranscriptStore, forgotten: tuple[Erasure, dict[str, Any]]
) -> None:
    erasure, _ = forgotten
    reads_of_content = [
        lambda: store.active(SECRET),
        lambda: store.history(SECRET),
        lambda: store.compactions(SECRET),
        lambda: store.explain(SECRET, "m1"),
        lambda: store.active_at(SECRET, 2),
        lambda: store.active_at(SECRET, 6),
        lambda: store.begin_compaction(SECRET),
    ]
    for read in reads_of_content:
        with pytest.raises(SessionErasedError) as raised:
            read()
        assert raised.value.erased_at == erasure.erased_at
        assert str(raised.value) == (
            f"session {SECRET!r} was erased at {erasure.erased_at:%Y-%m-%d %H:%M:%S} UTC"
        )


def test_a_forgotten_session_takes_no_write_and_cannot_be_started_again(
    store: TranscriptStore, forgotten: tuple[Erasure, dict[str, Any]]
) -> None:
    writes = [
        lambda: store.append(SECRET, [{"role": "user", "content": "again"}]),
        lambda: store.sync(SECRET, [{"id": "m1", "role": "user", "content": "x"}]),
        lambda: store.start(SECRET, source="agent", model="model-x"),
        lambda: store.start(SECRET),
        lambda: store.compact(SECRET, lambda messages: messages),
    ]
    for write in writes:
        with pytest.raises(SessionErasedError):
            write()
    assert [event["type"] for event in store.events(SECRET)] == ["Erased"]


def test_a_compaction_begun_before_the_erasure_cannot_commit_or_fail_after_it(
    store: TranscriptStore, turns
) -> None:
    store.start(SECRET)
    store.append(SECRET, turns(4))
    attempt = store.begin_compaction(SECRET)
    store.forget(SECRET)
    with pytest.raises(SessionErasedError):
        store.commit_compaction(attempt, attempt.messages[:1])
    with pytest.raises(SessionErasedError):
        store.fail_compaction(attempt, "too late")
    assert [event["type"] for event in store.events(SECRET)] == ["Erased"]


def test_forgetting_twice_changes_nothing_and_gives_back_the_first_erasure(
    store: TranscriptStore, forgotten: tuple[Erasure, dict[str, Any]]
) -> None:
    first, _ = forgotten
    again = store.forget(SECRET)
    assert again.already_erased
    assert {**vars(again), "already_erased": False} == vars(first)
    assert len(store.events(SECRET)) == 1


def test_forgetting_a_session_never_started_raises_session_not_found(
    store: TranscriptStore,
) -> None:
    with pytest.raises(SessionNotFoundError):
        store.forget("never")


def test_other_sessions_are_intact_and_the_views_equal_the_log_after_forget_and_rebuild(
    store: TranscriptStore, forgotten: tuple[Erasure, dict[str, Any]]
) -> None:
    _, other = forgotten
    assert seen(store, OTHER) == other
    assert store.verify_projections().ok
    sessions = store.sessions()
    store.rebuild_projections()
    assert store.sessions() == sessions
    assert seen(store, OTHER) == other
    report = store.verify_projections()
    assert report.ok, [str(problem) for problem in report.problems]
    assert report.sessions == 2


def test_a_session_forgotten_before_the_views_saw_it_is_listed_from_its_tombstone(
    store: TranscriptStore,
) -> None:
    store.start(SECRET, metadata={"k": MARKER})  # writes only: no query catches the views up
    store.append(SECRET, [{"role": "user", "content": MARKER}])
    erasure = store.forget(SECRET)
    [summary] = store.sessions()
    assert (summary["id"], summary["erased_at"], summary["messages"]) == (
        SECRET, erasure.erased_at, 0,
    )  # fmt: skip
    assert store.verify_projections().ok


def test_a_writer_holding_a_stale_copy_of_the_session_cannot_write_behind_the_tombstone(
    shared_url: str,
) -> None:
    with TranscriptStore.open(shared_url) as eraser, TranscriptStore.open(shared_url) as stale:
        eraser.start(SECRET)
        stale.append(SECRET, [{"role": "user", "content": "cached at version 2"}])
        eraser.append(
            SECRET, [{"role": "user", "content": MARKER}, {"role": "user", "content": "v4"}]
        )
        eraser.forget(SECRET)
        with pytest.raises(SessionErasedError):  # version 3 was deleted: the fence refuses it
            stale.append(SECRET, [{"role": "user", "content": "after the erasure"}])
        assert [event["type"] for event in stale.events(SECRET)] == ["Erased"]
        assert stale.verify_projections().ok


def test_search_no_longer_finds_a_forgotten_session(sqlite_url: str) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        fill_other(store)
        fill_secret(store)
        assert store.search(MARKER)
        store.forget(SECRET)
        assert store.search(MARKER) == []
        assert [hit["session_id"] for hit in store.search("hide")] == [OTHER]


def test_no_byte_of_a_forgotten_session_is_left_in_the_sqlite_file_or_its_wal(
    sqlite_url: str, tmp_path: Path
) -> None:
    path = path_of(sqlite_url)
    marker = MARKER.encode()
    with TranscriptStore.open(sqlite_url) as store:
        other = fill_other(store)
        fill_secret(store)
        store.search("hide")  # the views and the search index hold it too
        assert marker in files_bytes(path)
        store.forget(SECRET)
        assert marker not in files_bytes(path)  # open: the WAL was emptied, not just dropped
        assert store.verify_projections().ok
    assert marker not in files_bytes(path)
    assert marker.upper() not in files_bytes(path).upper()
    with TranscriptStore.open(sqlite_url) as reopened:
        assert seen(reopened, OTHER) == other
        reopened.rebuild_projections()
        summary = {session["id"]: session for session in reopened.sessions()}[SECRET]
        assert isinstance(summary["erased_at"], datetime)
        with pytest.raises(SessionErasedError):
            reopened.active(SECRET)
        assert reopened.verify_projections().ok


def test_no_byte_of_a_session_forgotten_after_a_rebuild_is_left_in_the_sqlite_file(
    sqlite_url: str,
) -> None:
    """The rebuild dropped the tables it replaced, which held the session's messages: their
    freed pages are zeroed too, or the erasure would leave those copies behind."""
    path = path_of(sqlite_url)
    with TranscriptStore.open(sqlite_url) as store:
        fill_other(store)
        fill_secret(store)
        store.rebuild_projections()
        store.forget(SECRET)
        assert MARKER.encode() not in files_bytes(path)
        assert store.verify_projections().ok


def test_no_byte_of_a_session_forgotten_after_a_rebuild_stopped_is_left_in_the_sqlite_file(
    sqlite_url: str,
) -> None:
    """A rebuild that stopped left its tables, holding a copy of every message."""
    path = path_of(sqlite_url)
    with TranscriptStore.open(sqlite_url) as store:
        fill_other(store)
        fill_secret(store)
        stop_a_rebuild(store)
        store.forget(SECRET)
        assert MARKER.encode() not in files_bytes(path)
        assert_rebuilt_without_it(store)


def test_a_session_forgotten_while_a_rebuild_runs_is_erased_from_the_views_it_swaps_in(
    sqlite_url: str,
) -> None:
    path = path_of(sqlite_url)
    with TranscriptStore.open(sqlite_url) as store:
        fill_secret(store)  # first in the log: the rebuild's first batch copies it
        store.start("filler")
        store.append("filler", [{"role": "user", "content": f"f{i}"} for i in range(1500)])
        forgotten: list[Erasure] = []

        def forget_after_the_first_batch(done: int, total: int) -> None:
            if not forgotten:  # between two of the rebuild's transactions
                forgotten.append(store.forget(SECRET))

        store.rebuild_projections(progress=forget_after_the_first_batch)
        assert forgotten
        assert MARKER.encode() not in files_bytes(path)
        assert isinstance({s["id"]: s for s in store.sessions()}[SECRET]["erased_at"], datetime)
        assert len(store.active("filler")) == 1500
        assert store.verify_projections().ok


# A view row of the session damaged in place (SQL), and so unreadable by the projection.
DAMAGED_ROWS = {
    "its sessions row": (
        f"UPDATE sessions SET started_at = 'not a time' WHERE session_id = '{SECRET}'"
    ),
    "a message the search index holds": (  # its index entries are deleted by their text
        f"UPDATE message_history SET message = '{{broken' WHERE session_id = '{SECRET}' "
        "AND message_id = 't5'"
    ),
}


@pytest.mark.parametrize("damage", DAMAGED_ROWS.values(), ids=DAMAGED_ROWS.keys())
def test_no_byte_of_a_session_forgotten_while_a_view_row_of_it_was_damaged_is_left_in_the_file(
    sqlite_url: str, damage: str
) -> None:
    """The views could not take the tombstone (they quarantined it): forget rebuilds them
    from the log, which holds the tombstone alone, rather than leave the session's rows."""
    path = path_of(sqlite_url)
    with TranscriptStore.open(sqlite_url) as store:
        fill_other(store)
        fill_secret(store)
        store.search("hide")
    query(sqlite_url, damage)
    with TranscriptStore.open(sqlite_url) as store:
        store.forget(SECRET)
        assert MARKER.encode() not in files_bytes(path)
        assert isinstance({s["id"]: s for s in store.sessions()}[SECRET]["erased_at"], datetime)
        assert store.verify_projections().ok


class RebuildStopped(Exception):
    pass


def stop_a_rebuild(store: TranscriptStore) -> None:
    """Start a rebuild and stop it after its first batch, leaving its tables behind."""

    def stop(done: int, total: int) -> None:
        raise RebuildStopped

    with pytest.raises(RebuildStopped):
        store.rebuild_projections(progress=stop)


def assert_rebuilt_without_it(store: TranscriptStore) -> None:
    """A rebuild after the erasure ends, the session erased in its views."""
    store.rebuild_projections()
    assert isinstance({s["id"]: s for s in store.sessions()}[SECRET]["erased_at"], datetime)
    assert store.search(MARKER) == []
    assert store.verify_projections().ok


def files_bytes(path: Path) -> bytes:
    """The database file and its -wal and -shm files, as they are on disk."""
    files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
    return b"".join(file.read_bytes() for file in files if file.exists())


def test_no_row_of_a_forgotten_session_is_left_in_any_postgresql_table(postgres_url: str) -> None:
    with TranscriptStore.open(postgres_url) as store:
        fill_other(store)
        fill_secret(store)
        store.forget(SECRET)
    assert postgres_rows_holding_the_marker(postgres_url) == ([], 0)


def test_no_row_of_a_session_forgotten_after_a_rebuild_stopped_is_left_in_postgresql(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url) as store:
        fill_other(store)
        fill_secret(store)
        stop_a_rebuild(store)
        store.forget(SECRET)
        assert postgres_rows_holding_the_marker(postgres_url) == ([], 0)
        assert_rebuilt_without_it(store)


def postgres_rows_holding_the_marker(postgres_url: str) -> tuple[list[str], int]:
    """The tables with a row holding MARKER (as text or bytes), and how many events do."""
    import psycopg

    location = StoreConfig.from_url(postgres_url).location
    assert location is not None
    with psycopg.connect(**location.connection_kwargs(), autocommit=True) as connection:
        names = [name for (name,) in connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()]  # fmt: skip
        assert "transcripts_events" in names and "message_history" in names
        holding = [
            name
            for name in names
            if connection.execute(
                f'SELECT count(*) FROM "{name}" AS t WHERE position(%s in t::text) > 0 '
                "OR position(convert_to(%s, 'UTF8') in convert_to(t::text, 'UTF8')) > 0",
                (MARKER, MARKER),
            ).fetchone()[0]  # type: ignore[index]
        ]
        events = connection.execute(
            "SELECT count(*) FROM transcripts_events WHERE position(%s in state) > 0",
            (MARKER.encode(),),
        ).fetchone()
    assert events is not None
    return holding, events[0]


@pytest.fixture(params=["sqlite", "postgres"])
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store URL two store objects can share: a SQLite file, or a PostgreSQL database."""
    if request.param == "postgres":
        return request.getfixturevalue("postgres_url")
    return f"sqlite:///{tmp_path / 'shared.db'}"


def test_importing_a_hermes_file_again_does_not_bring_a_forgotten_session_back(
    sqlite_url: str,
) -> None:
    source = Release.load("0.19.0").path  # written by the real hermes-agent 0.19.0
    with TranscriptStore.open(sqlite_url) as store:
        first = import_hermes(store, source)
        forgotten = first[0].session_id
        erasure = store.forget(forgotten)
        again = {report.session_id: report for report in import_hermes(store, source)}
        assert again[forgotten].status == "unchanged"
        assert again[forgotten].notes == [
            f"erased at {erasure.erased_at:%Y-%m-%d %H:%M:%S} UTC: not imported again"
        ]
        assert [event["type"] for event in store.events(forgotten)] == ["Erased"]
        assert all(report.status == "unchanged" for report in again.values())
