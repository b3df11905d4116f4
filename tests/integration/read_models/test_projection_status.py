"""projection_status(): one entry per view with its version, the log position it reflects
against the log head (lag), its row count and the quarantined events; and one for the search
index, which lags until a search (or a follower) brings it up to date."""

from __future__ import annotations

from typing import ClassVar

from support.log import write_behind_the_views
from transcripts import TranscriptStore
from transcripts.projections.projector import Projector

VIEWS = ["active_messages", "message_history", "compaction_attempts", "sessions"]
INDEX = "message_search"  # versioned with the history it indexes


def version(view: str) -> int:
    return Projector.VERSIONS["message_history" if view == INDEX else view]


def events_in_log(store: TranscriptStore) -> int:
    return sum(len(store.events(session["id"])) for session in store.sessions())


def test_a_new_store_has_one_empty_entry_per_view_at_position_zero(store: TranscriptStore) -> None:
    statuses = store.projection_status()
    assert [status.view for status in statuses] == [*VIEWS, INDEX]
    for status in statuses:
        assert (status.version, status.position, status.head, status.lag) == (
            version(status.view),
            0,
            0,
            0,
        )
        assert (status.rows, status.quarantined) == (0, 0)


def test_after_writes_and_a_read_every_view_is_at_the_log_head_with_the_right_row_counts(
    store: TranscriptStore, fill
) -> None:
    fill(store)
    store.sessions()  # any query brings the views up to the log head
    events = events_in_log(store)
    rows = {
        "active_messages": sum(len(store.active(s["id"])) for s in store.sessions()),
        "message_history": sum(len(store.history(s["id"])) for s in store.sessions()),
        "compaction_attempts": sum(len(store.compactions(s["id"])) for s in store.sessions()),
        "sessions": len(store.sessions()),
    }
    assert rows == {
        "active_messages": 5,
        "message_history": 9,
        "compaction_attempts": 2,
        "sessions": 2,
    }
    *views, index = store.projection_status()
    assert [status.view for status in views] == VIEWS
    for status in views:
        assert (status.position, status.head, status.lag) == (events, events, 0), status.view
        assert status.rows == rows[status.view], status.view
        assert status.quarantined == 0
    assert (index.view, index.position, index.lag, index.rows) == (INDEX, 0, events, 0)


def test_the_search_index_lags_until_a_search_which_brings_it_to_the_log_head(
    store: TranscriptStore, fill
) -> None:
    fill(store)
    store.sessions()
    index = store.projection_status()[-1]
    assert (index.view, index.rows) == (INDEX, 0) and index.lag > 0
    store.search("anything")
    index = store.projection_status()[-1]
    assert (index.position, index.lag, index.rows) == (index.head, 0, 9)


def test_status_shows_the_lag_of_views_that_have_not_seen_the_last_events_and_catch_up_clears_it(
    sqlite_url: str,
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        store.start("s")
        store.active("s")
        position = store.projection_status()[0].position
        write_behind_the_views(sqlite_url, sessions=2, messages=100)  # 202 events
        statuses = store.projection_status()[:4]
        assert [(s.position, s.head, s.lag) for s in statuses] == [
            (position, position + 202, 202)
        ] * 4
        assert [s.rows for s in statuses] == [0, 0, 0, 1]  # status reports, it does not catch up
        assert store.catch_up_projections() == 202
        statuses = store.projection_status()[:4]
        assert [(s.position, s.lag) for s in statuses] == [(position + 202, 0)] * 4
        assert [s.rows for s in statuses] == [200, 200, 0, 3]


def test_status_reports_the_versions_of_the_projector_the_store_was_opened_with(
    sqlite_url: str,
) -> None:
    class Bumped(Projector):
        VERSIONS: ClassVar[dict[str, int]] = {
            **Projector.VERSIONS,
            "sessions": Projector.VERSIONS["sessions"] + 1,
        }

    with TranscriptStore.open(sqlite_url) as store:
        store.start("s")
    with TranscriptStore.open(sqlite_url, projector=Bumped) as store:
        versions = {status.view: status.version for status in store.projection_status()}
        assert all(status.lag == 0 for status in store.projection_status()[:4])
    assert versions == {**Bumped.VERSIONS, INDEX: version("message_history")}
