"""An event the views cannot take (a corrupt payload, an unknown topic) does not stop a rebuild
or a catch-up: it goes to quarantined_events with its position and reason, its session is
flagged (its other events projected, but reading it is a StorageError naming the event: its
views are incomplete), the other sessions are projected completely, and status and verify
report it."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from support.log import append_behind_the_views, expected_summary, fold_of
from support.rows import connect, head, tracked
from transcripts import StorageError, TranscriptStore
from transcripts.domain.transcript import transcript_id

SICK, WELL = "sick", "well"


def corrupt_payload(db: sqlite3.Connection, position: int) -> None:
    db.execute("UPDATE stored_events SET state = ? WHERE rowid = ?", (b"not json", position))


def unknown_topic(db: sqlite3.Connection, position: int) -> None:
    db.execute(
        "UPDATE stored_events SET topic = 'transcripts:Transcript.NoSuchEvent' WHERE rowid = ?",
        (position,),
    )


CORRUPTIONS: dict[str, Callable] = {
    "a corrupt payload": corrupt_payload,
    "an unknown topic": unknown_topic,
}


def position_of(url: str, session_id: str, version: int) -> int:
    """The log position of event `version` of a session."""
    with connect(url) as db:
        (position,) = db.execute(
            "SELECT rowid FROM stored_events WHERE originator_id = ? AND originator_version = ?",
            (transcript_id(session_id).hex, version),
        ).fetchone()
    return position


def write_two_sessions(store: TranscriptStore) -> None:
    store.start(SICK)
    store.start(WELL)
    store.append(SICK, [{"id": f"s{i}", "role": "user", "content": f"sick {i}"} for i in range(3)])
    store.append(WELL, [{"id": f"w{i}", "role": "user", "content": f"well {i}"} for i in range(3)])
    store.compact(WELL, lambda messages: [{"role": "system", "content": "sum"}, messages[-1]])


def assert_well_is_complete(store: TranscriptStore, url: str) -> None:
    fold = fold_of(url, WELL)
    assert store.active(WELL) == fold.active()
    assert store.history(WELL) == fold.history()
    assert store.compactions(WELL) == fold.compactions
    (summary,) = [s for s in store.sessions() if s["id"] == WELL]
    assert summary == expected_summary(fold)


def active_ids(url: str, session_id: str) -> list[str]:
    """The message ids of a session's active_messages rows, in order."""
    with connect(url) as db:
        rows = db.execute(
            "SELECT message_id FROM active_messages WHERE session_id = ? ORDER BY position",
            (session_id,),
        )
        return [message_id for (message_id,) in rows]


def assert_unreadable(store: TranscriptStore, session_id: str, version: int) -> None:
    with pytest.raises(StorageError, match=rf"a stored event is corrupt \(version {version}: "):
        store.active(session_id)


def quarantined(url: str) -> list[tuple]:
    with connect(url) as db:
        return db.execute(
            "SELECT position, session_id, version, topic, reason "
            "FROM quarantined_events ORDER BY position"
        ).fetchall()


def flags(url: str) -> dict[str, int]:
    with connect(url) as db:
        return dict(db.execute("SELECT session_id, quarantined FROM sessions").fetchall())


def two_sessions_with_a_damaged_event(url: str, version: int, corruption: Callable) -> int:
    """The two sessions in a closed store file, event `version` of the sick one damaged by
    `corruption`; its log position."""
    with TranscriptStore.open(url) as store:
        write_two_sessions(store)
    position = position_of(url, SICK, version)
    with connect(url) as db:
        corruption(db, position)
    return position


@pytest.fixture(params=CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def corrupted(request: pytest.FixtureRequest, sqlite_url: str) -> int:
    """A store file whose `s1` (version 3 of the sick session) cannot be read; its position."""
    return two_sessions_with_a_damaged_event(sqlite_url, 3, request.param)


def test_a_rebuild_quarantines_the_corrupt_event_and_projects_every_other_one(
    sqlite_url: str, corrupted: int
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        assert store.rebuild_projections() == head(sqlite_url)
        assert tracked(sqlite_url) == head(sqlite_url)
        assert_well_is_complete(store, sqlite_url)
        assert active_ids(sqlite_url, SICK) == ["s0", "s2"]
        assert_unreadable(store, SICK, 3)
        (row,) = quarantined(sqlite_url)
        assert row[:3] == (corrupted, SICK, 3)
        assert row[4]  # a reason
        assert flags(sqlite_url) == {SICK: 1, WELL: 0}
        summaries = {s["id"]: s["quarantined"] for s in store.sessions()}
        assert summaries == {SICK: 1, WELL: 0}


def test_a_catch_up_quarantines_an_event_the_views_had_not_seen_and_goes_on(
    sqlite_url: str,
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        write_two_sessions(store)
        store.catch_up_projections()
        append_behind_the_views(
            sqlite_url, SICK, [{"id": "late", "role": "user", "content": "not yet projected"}]
        )
        append_behind_the_views(
            sqlite_url, WELL, [{"id": "w-late", "role": "user", "content": "after the bad one"}]
        )
        position = position_of(sqlite_url, SICK, 5)
        with connect(sqlite_url) as db:
            corrupt_payload(db, position)
        assert store.catch_up_projections() == 2
        assert_well_is_complete(store, sqlite_url)
        assert store.active(WELL)[-1]["id"] == "w-late"
        assert [row[:3] for row in quarantined(sqlite_url)] == [(position, SICK, 5)]
        assert flags(sqlite_url) == {SICK: 1, WELL: 0}
        # and later writes of both sessions are projected as usual
        store.append(WELL, [{"id": "w-later", "role": "user", "content": "x"}])
        assert store.active(WELL)[-1]["id"] == "w-later"
    with TranscriptStore.open(sqlite_url) as reopened:  # nothing is projected twice
        assert len(quarantined(sqlite_url)) == 1
        assert_well_is_complete(reopened, sqlite_url)


def test_a_store_opened_on_lagging_views_quarantines_the_corrupt_event_while_catching_up(
    sqlite_url: str,
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        write_two_sessions(store)
    append_behind_the_views(sqlite_url, WELL, [{"id": "w3", "role": "user", "content": "unread"}])
    append_behind_the_views(sqlite_url, SICK, [{"id": "s3", "role": "user", "content": "unread"}])
    position = position_of(sqlite_url, WELL, 6)
    assert tracked(sqlite_url) < position < head(sqlite_url)  # the views have not seen it
    with connect(sqlite_url) as db:
        unknown_topic(db, position)
    with TranscriptStore.open(sqlite_url) as store:
        assert tracked(sqlite_url) == head(sqlite_url)
        assert [row[:3] for row in quarantined(sqlite_url)] == [(position, WELL, 6)]
        assert [m["id"] for m in store.active(SICK)] == ["s0", "s1", "s2", "s3"]
        assert len(active_ids(sqlite_url, WELL)) == 2  # the summary and w2: w3 is quarantined
        assert_unreadable(store, WELL, 6)
        assert flags(sqlite_url) == {SICK: 0, WELL: 1}


def test_projection_status_reports_the_quarantined_events(sqlite_url: str, corrupted: int) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        store.rebuild_projections()
        statuses = store.projection_status()
    assert [status.quarantined for status in statuses] == [1] * 5  # the views and the index
    assert all(status.lag == 0 for status in statuses if status.view != "message_search")


def test_verify_reports_a_quarantined_event_with_its_session_and_position(
    sqlite_url: str, corrupted: int
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        store.rebuild_projections()
        report = store.verify_projections()
    assert not report.ok
    problems = [(p.session_id, p.view, p.kind, p.key) for p in report.problems]
    assert (SICK, "quarantined_events", "quarantined", f"position {corrupted}") in problems
    assert not [p for p in report.problems if p.session_id == WELL]


def test_a_corrupt_started_event_quarantines_its_session_and_not_the_others(
    sqlite_url: str,
) -> None:
    started = two_sessions_with_a_damaged_event(sqlite_url, 1, unknown_topic)
    with TranscriptStore.open(sqlite_url) as store:
        store.rebuild_projections()
        assert_well_is_complete(store, sqlite_url)
        assert [s["id"] for s in store.sessions()] == [WELL]
        rows = quarantined(sqlite_url)
        assert [row[0] for row in rows] == [
            started,
            *(position_of(sqlite_url, SICK, v) for v in (2, 3, 4)),
        ]
        assert all(row[1] is None for row in rows)  # no session row to name or flag
        assert [status.quarantined for status in store.projection_status()] == [4] * 5


def test_verify_reports_the_quarantined_events_of_a_session_whose_started_event_is_corrupt(
    sqlite_url: str,
) -> None:
    started = two_sessions_with_a_damaged_event(sqlite_url, 1, corrupt_payload)
    with TranscriptStore.open(sqlite_url) as store:
        store.rebuild_projections()
        report = store.verify_projections()
    assert not report.ok
    assert {(p.view, p.kind) for p in report.problems} == {("quarantined_events", "quarantined")}
    assert f"position {started}" in {p.key for p in report.problems}
