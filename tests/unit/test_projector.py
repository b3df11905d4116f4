"""The projector alone: what a batch of log entries does to the views (`ViewChanges`), read
through the `ViewState` port from views kept in memory (support/views.py), with no SQL.

Each batch is projected and then written to the memory views, as the SQL views write it,
so that a later batch reads what an earlier one stored."""

from __future__ import annotations

import dataclasses

import pytest

from support.events import collect, commit, entries, start
from support.messages import TRIP, summary, turns
from support.views import MemoryViews
from transcripts.domain.transcript import Transcript, transcript_id
from transcripts.projections.entries import segments
from transcripts.projections.projector import LogEntry, Projector
from transcripts.projections.rows import (
    ActiveRow,
    AttemptRow,
    HistoryMark,
    QuarantineRow,
    Supersession,
    ViewChanges,
)

TRIP_ID = transcript_id("trip").hex


@pytest.fixture
def views() -> MemoryViews:
    return MemoryViews()


def project(views: MemoryViews, batch: list[LogEntry]) -> ViewChanges:
    """Project one batch, segment by segment, writing each segment's changes to the views
    before the next is projected, as the SQL views do; the last segment's changes."""
    for segment in segments(batch):
        changes = Projector(views).project(segment)
        views.write(changes)
    return changes


def active_ids(views: MemoryViews, session_id: str = "trip") -> list[str]:
    rows = views.active.get(session_id, [])
    assert [row.position for row in rows] == list(range(1, len(rows) + 1))
    return [row.message_id for row in rows]


@pytest.fixture
def trip() -> Transcript:
    transcript = start("trip", source="cli", model="m")
    transcript.append(TRIP)
    return transcript


# -- a healthy log ----------------------------------------------------------------------------


def test_one_batch_holding_a_start_appends_and_a_compaction_makes_every_row_the_compaction_last(
    views: MemoryViews, trip: Transcript
) -> None:
    commit(trip, [TRIP[0], summary("sum"), TRIP[5]], compaction_id="cmp-1", tokens_before=9)
    events = collect(trip)
    changes = project(views, entries(events))
    summary_id = events[-1].added[0]["id"]

    assert changes.started == {TRIP_ID} and changes.erased == set()
    row = changes.sessions[TRIP_ID]
    assert (row.session_id, row.source, row.model, row.version) == ("trip", "cli", "m", 8)
    assert (row.message_count, row.active_count, row.compactions_committed) == (7, 3, 1)
    assert (row.started_at, row.last_event_at) == (events[0].timestamp, events[-1].timestamp)
    history = list(changes.history_inserts.values())
    assert [(h.seq, h.message_id) for h in history] == [
        *((seq, f"m{seq}") for seq in range(1, 7)),
        (7, summary_id),
    ]
    # Rows are inserted as appended; the compaction supersedes them where they are, last.
    assert all(h.active for h in history)
    assert history[-1].added_by == "cmp-1" and history[-1].appended_version == 8
    assert [a.message_id for a in changes.active_appends] == [f"m{i}" for i in range(1, 7)]
    assert changes.active_rewrites == {}
    summary_row = ActiveRow("trip", 2, summary_id, "system", {"id": summary_id, **summary("sum")})
    assert changes.supersession == Supersession(
        "trip",
        "cmp-1",
        replaced=6,
        kept=[("m1", 1), ("m6", 3)],
        added=[summary_row],
        length=3,
        base=0,
        next_base=6,  # the superseded rows keep positions 2-5, the context moves above 6
    )
    assert views.sessions[TRIP_ID].position_base == 6
    assert active_ids(views) == ["m1", summary_id, "m6"]
    assert views.superseded == {("trip", f"m{i}"): "cmp-1" for i in range(2, 6)}
    [attempt] = changes.attempts
    assert attempt == AttemptRow(
        compaction_id="cmp-1",
        session_id="trip",
        version=8,
        status="committed",
        reason="",
        failure=None,
        error=None,
        based_on_version=7,
        superseded_ids=[],  # listed by the views, as they supersede them
        added_ids=[summary_id],
        superseded_count=4,
        added_count=1,
        tokens_before=9,
        tokens_after=None,
        at=events[-1].timestamp,
    )
    assert changes.quarantine == []


def test_a_batch_is_cut_after_each_committed_compaction_and_later_events_see_its_rows(
    views: MemoryViews, trip: Transcript
) -> None:
    commit(trip, [summary("one"), TRIP[5]], compaction_id="cmp-1")
    trip.append([{"id": "m7", **turns(1)[0]}])
    commit(trip, [summary("two")], compaction_id="cmp-2")
    trip.append([{"id": "m8", **turns(2)[1]}])
    batch = entries(collect(trip))
    assert [len(segment) for segment in segments(batch)] == [8, 2, 1]
    changes = project(views, batch)
    two = trip.active[0]
    assert active_ids(views) == [two, "m8"]
    assert views.superseded[("trip", "m7")] == "cmp-2"
    assert (changes.sessions[TRIP_ID].active_count, changes.sessions[TRIP_ID].version) == (2, 11)


def test_projecting_past_a_committed_compaction_in_one_segment_is_an_error(
    views: MemoryViews, trip: Transcript
) -> None:
    commit(trip, [summary()], compaction_id="cmp-1")
    trip.append([{"id": "m7", **turns(1)[0]}])
    with pytest.raises(ValueError, match="ends a segment"):
        Projector(views).project(entries(collect(trip)))


def test_appends_to_a_session_the_views_hold_go_on_from_its_positions_and_seqs(
    views: MemoryViews, trip: Transcript
) -> None:
    project(views, entries(collect(trip)))
    trip.append([{"id": "m7", **turns(1)[0]}, {"id": "m8", **turns(2)[1]}])
    changes = project(views, entries(collect(trip), first=8))
    assert changes.started == set()
    assert [(a.position, a.message_id) for a in changes.active_appends] == [(7, "m7"), (8, "m8")]
    assert [h.seq for h in changes.history_inserts.values()] == [7, 8]
    row = changes.sessions[TRIP_ID]
    assert (row.message_count, row.active_count, row.version) == (8, 8, 9)
    assert active_ids(views) == [f"m{i}" for i in range(1, 9)]


def test_a_compaction_in_a_later_batch_supersedes_the_stored_rows_without_reading_them(
    views: MemoryViews, trip: Transcript
) -> None:
    project(views, entries(collect(trip)))
    commit(trip, [summary(), TRIP[5]], compaction_id="cmp-1")
    [event] = collect(trip)
    changes = project(views, entries([event], first=8))
    summary_id = event.added[0]["id"]
    assert ("active", "trip") not in views.loaded  # the views supersede where the rows are
    assert changes.supersession is not None and changes.supersession.replaced == 6
    assert views.superseded == {("trip", f"m{i}"): "cmp-1" for i in range(1, 6)}
    assert [(h.seq, h.message_id) for h in changes.history_inserts.values()] == [(7, summary_id)]
    assert active_ids(views) == [summary_id, "m6"]
    assert views.sessions[TRIP_ID].active_count == 2


def test_a_failed_compaction_adds_a_failed_attempt_and_changes_no_message(
    views: MemoryViews, trip: Transcript
) -> None:
    project(views, entries(collect(trip)))
    trip.fail_compaction(
        compaction_id="cmp-f", based_on_version=7, failure="summarize_error", error="down",
        reason="budget", would_supersede=["m1", "m2"], tokens_before=5,
    )  # fmt: skip
    changes = project(views, entries(collect(trip), first=8))
    [attempt] = changes.attempts
    assert (attempt.status, attempt.failure, attempt.error, attempt.reason) == (
        "failed",
        "summarize_error",
        "down",
        "budget",
    )
    assert (attempt.superseded_ids, attempt.superseded_count) == (["m1", "m2"], 2)
    assert (attempt.added_ids, attempt.added_count, attempt.tokens_before) == ([], 0, 5)
    assert changes.history_inserts == {} and changes.supersession is None
    assert changes.active_appends == [] and changes.active_rewrites == {}
    row = changes.sessions[TRIP_ID]
    assert (row.compactions_failed, row.compactions_committed, row.version) == (1, 0, 8)


@pytest.mark.parametrize("rewound_and_restored", [False, True])
def test_a_batch_reads_each_session_it_touches_once(
    views: MemoryViews, trip: Transcript, rewound_and_restored: bool
) -> None:
    """Appends ask the views whether a message is rewound only if its session has some."""
    if rewound_and_restored:
        trip.rewind(["m6"], reason="")
        trip.append([TRIP[5]])
    project(views, entries(collect(trip)))
    views.loaded.clear()
    trip.append(turns(40))
    project(views, entries(collect(trip), first=10))
    assert views.loaded == [("session", TRIP_ID)]


# -- rewinds and restores ---------------------------------------------------------------------


def test_a_rewind_in_the_batch_of_the_appends_marks_their_pending_rows_and_counts_them(
    views: MemoryViews, trip: Transcript
) -> None:
    trip.rewind(["m5", "m6"], reason="undo")
    changes = project(views, entries(collect(trip)))
    marks = {h.message_id: (h.active, h.rewound_version) for h in changes.history_inserts.values()}
    assert marks == {
        **{f"m{i}": (True, None) for i in range(1, 5)},
        "m5": (False, 8),
        "m6": (False, 8),
    }
    assert changes.marks == {} and active_ids(views) == ["m1", "m2", "m3", "m4"]
    row = changes.sessions[TRIP_ID]
    assert (row.message_count, row.active_count, row.rewound_count) == (6, 4, 2)
    assert row.compactions_committed == 0


def test_a_rewind_in_a_later_batch_rewrites_the_stored_list_and_marks_the_stored_rows(
    views: MemoryViews, trip: Transcript
) -> None:
    project(views, entries(collect(trip)))
    trip.rewind(["m4", "m5", "m6"], reason="")
    changes = project(views, entries(collect(trip), first=8))
    assert ("active", "trip") in views.loaded
    assert changes.marks == {("trip", f"m{i}"): HistoryMark(False, 8, None) for i in (4, 5, 6)}
    assert changes.history_inserts == {} and changes.supersession is None
    assert active_ids(views) == ["m1", "m2", "m3"]
    assert (views.sessions[TRIP_ID].active_count, views.sessions[TRIP_ID].rewound_count) == (3, 3)


def test_a_restore_asks_the_stored_views_and_appends_the_message_where_its_row_stays(
    views: MemoryViews, trip: Transcript
) -> None:
    trip.rewind(["m5", "m6"], reason="")
    project(views, entries(collect(trip)))
    views.loaded.clear()
    trip.append([TRIP[5], {"id": "m7", **turns(1)[0]}])
    changes = project(views, entries(collect(trip), first=9))
    assert views.loaded == [("session", TRIP_ID), ("rewound", "m6"), ("rewound", "m7")]
    assert changes.marks == {("trip", "m6"): HistoryMark(True, None, 9)}
    assert [(h.seq, h.message_id) for h in changes.history_inserts.values()] == [(7, "m7")]
    assert [(a.position, a.message_id) for a in changes.active_appends] == [(5, "m6"), (6, "m7")]
    row = changes.sessions[TRIP_ID]
    assert (row.message_count, row.active_count, row.rewound_count) == (7, 6, 1)


def test_a_rewind_a_restore_and_a_rewind_again_in_one_batch_leave_the_last_marks(
    views: MemoryViews, trip: Transcript
) -> None:
    project(views, entries(collect(trip)))
    trip.rewind(["m6"], reason="")
    trip.append([TRIP[5]])
    trip.rewind(["m6"], reason="")
    trip.append([{"id": "m7", **turns(1)[0]}])
    trip.rewind(["m7"], reason="")
    trip.append([{"id": "m7", **turns(1)[0]}])
    changes = project(views, entries(collect(trip), first=8))
    assert changes.marks == {("trip", "m6"): HistoryMark(False, 10, 9)}
    [m7] = changes.history_inserts.values()
    assert (m7.active, m7.rewound_version, m7.restored_version) == (True, None, 13)
    assert active_ids(views) == ["m1", "m2", "m3", "m4", "m5", "m7"]
    assert views.sessions[TRIP_ID].rewound_count == 1


def test_an_append_or_a_rewind_offered_again_is_neither_a_restore_nor_a_second_rewind(
    views: MemoryViews, trip: Transcript
) -> None:
    """Each alone, as the SQL views project the entries of a batch they could not take."""
    trip.rewind(["m6"], reason="")
    trip.append([TRIP[5]])  # restored: m6 is active again
    trip.rewind(["m5"], reason="")
    events = collect(trip)
    project(views, entries(events))
    m5_again = Projector(views).project(entries([events[5]], first=20))
    assert m5_again.marks == {}  # rewound after that append: no restore (its key refuses it)
    assert list(m5_again.history_inserts) == [("trip", "m5")]
    rewind_again = Projector(views).project(entries([events[7]], first=21))  # of m6
    assert [q.reason for q in rewind_again.quarantine] == ["a rewind the views have taken already"]
    assert rewind_again.marks == {} and rewind_again.active_rewrites == {}


def test_a_rewind_of_messages_that_are_not_active_is_quarantined_and_changes_nothing(
    views: MemoryViews, trip: Transcript
) -> None:
    trip.rewind(["m6"], reason="")
    events = collect(trip)
    again = dataclasses.replace(events[-1], originator_version=9)
    changes = project(views, entries([*events, again]))
    [quarantined] = changes.quarantine
    assert quarantined.reason == "a rewind of messages that are not active: ['m6']"
    assert changes.sessions[TRIP_ID].rewound_count == 1


def test_a_second_append_of_a_message_in_the_batch_is_quarantined(
    views: MemoryViews, trip: Transcript
) -> None:
    events = collect(trip)
    again = dataclasses.replace(events[1], originator_version=8)
    changes = project(views, entries([*events, again]))
    assert [q.reason for q in changes.quarantine] == ["a second MessageAppended of message 'm1'"]
    assert active_ids(views) == [f"m{i}" for i in range(1, 7)]


# -- entries the views cannot take ------------------------------------------------------------


def test_an_undecodable_entry_is_quarantined_with_its_reason_and_flags_its_session(
    views: MemoryViews, trip: Transcript
) -> None:
    started, m1, m2, *_ = collect(trip)
    broken = LogEntry(3, TRIP_ID, 3, Transcript.MessageAppended.TOPIC, undecodable="bad JSON")
    changes = project(views, [*entries([started, m1]), broken, *entries([m2], first=4)])
    assert changes.quarantine == [
        QuarantineRow(3, TRIP_ID, "trip", 3, Transcript.MessageAppended.TOPIC, "bad JSON")
    ]
    assert changes.sessions[TRIP_ID].quarantined == 1
    assert active_ids(views) == ["m1", "m2"]  # the batch goes on around it


def test_an_event_of_a_session_never_started_is_quarantined_without_a_session(
    views: MemoryViews, trip: Transcript
) -> None:
    _, m1, *_ = collect(trip)
    changes = project(views, entries([m1], first=2))
    [quarantined] = changes.quarantine
    assert (quarantined.session_id, quarantined.position) == (None, 2)
    assert quarantined.reason == "an event of a session that has no Started event"
    assert changes.sessions == {} and changes.history_inserts == {}


def test_a_second_started_event_is_quarantined(views: MemoryViews, trip: Transcript) -> None:
    started, *rest = collect(trip)
    changes = project(views, entries([started, started, *rest]))
    assert [(q.position, q.reason) for q in changes.quarantine] == [
        (2, "a second Started event for one session")
    ]
    assert changes.sessions[TRIP_ID].message_count == 6


def test_a_compaction_of_messages_that_are_not_active_is_quarantined_and_changes_nothing(
    views: MemoryViews, trip: Transcript
) -> None:
    commit(trip, [summary()], compaction_id="cmp-1")
    started, m1, *_, compaction = collect(trip)
    changes = project(views, entries([started, m1, compaction]))
    [quarantined] = changes.quarantine
    assert quarantined.reason.startswith(
        "compaction of messages that are not active: it replaces 6 of 1 active messages"
    )
    assert changes.attempts == [] and changes.supersession is None
    assert [h.message_id for h in changes.history_inserts.values()] == ["m1"]
    assert all(h.active for h in changes.history_inserts.values())
    row = changes.sessions[TRIP_ID]
    assert (row.compactions_committed, row.message_count, row.quarantined) == (0, 1, 1)
    assert active_ids(views) == ["m1"]


def test_a_compaction_adding_a_message_without_a_role_is_quarantined_and_adds_no_row(
    views: MemoryViews, trip: Transcript
) -> None:
    commit(trip, [summary("first"), summary("second"), TRIP[5]], compaction_id="cmp-1")
    *appends, compaction = collect(trip)
    first, second = compaction.added
    roleless = {**second, "message": {"content": "second"}}
    damaged = dataclasses.replace(compaction, added=[first, roleless])
    project(views, entries(appends))
    changes = project(views, entries([damaged], first=len(appends) + 1))
    [quarantined] = changes.quarantine
    assert quarantined.reason.startswith("malformed event: KeyError")
    assert changes.history_inserts == {} and changes.supersession is None
    assert changes.sessions[TRIP_ID].message_count == 6
    assert active_ids(views) == [f"m{n}" for n in range(1, 7)]


def test_a_failed_compaction_that_cannot_be_read_whole_is_quarantined_and_counts_nothing(
    views: MemoryViews, trip: Transcript
) -> None:
    trip.fail_compaction(compaction_id="cmp-f", based_on_version=trip.version, failure="error",
                         error="boom", reason="", would_supersede=["m1"])  # fmt: skip
    *appends, failed = collect(trip)
    damaged = dataclasses.replace(failed, would_supersede=None)
    changes = project(views, entries([*appends, damaged]))
    [quarantined] = changes.quarantine
    assert quarantined.reason.startswith("malformed event: TypeError")
    assert changes.attempts == [] and changes.sessions[TRIP_ID].compactions_failed == 0


def test_a_compaction_adding_an_id_the_batch_stores_already_is_quarantined_whole(
    views: MemoryViews, trip: Transcript
) -> None:
    commit(trip, [summary("sum"), TRIP[5]], compaction_id="cmp-1")
    *appends, compaction = collect(trip)
    [added] = compaction.added
    order = ["m1" if i == added["id"] else i for i in compaction.order]
    damaged = dataclasses.replace(compaction, added=[{**added, "id": "m1"}], order=order)
    changes = project(views, entries([*appends, damaged]))
    [quarantined] = changes.quarantine
    assert quarantined.reason == "a compaction adding a message id stored already"
    history = list(changes.history_inserts.values())
    assert [(h.seq, h.message_id, h.added_by) for h in history] == [
        (seq, f"m{seq}", None) for seq in range(1, 7)
    ]
    assert changes.supersession is None and changes.attempts == []


@pytest.mark.parametrize("session_id", [5, None, ""])
def test_a_started_event_naming_no_session_id_is_quarantined_without_a_row(
    views: MemoryViews, trip: Transcript, session_id: object
) -> None:
    started, m1, *_ = collect(trip)
    damaged = dataclasses.replace(started, session_id=session_id)
    changes = project(views, entries([damaged, m1]))
    assert [q.reason for q in changes.quarantine] == [
        f"a session id that is no non-empty string: {session_id!r}",
        "an event of a session that has no Started event",
    ]
    assert changes.sessions == {} and changes.history_inserts == {}


def test_a_malformed_event_is_quarantined_as_malformed(
    views: MemoryViews, trip: Transcript
) -> None:
    started, m1, m2, *_ = collect(trip)
    damaged = dataclasses.replace(m2, message=["not", "an", "object"])
    changes = project(views, entries([started, m1, damaged]))
    [quarantined] = changes.quarantine
    assert quarantined.reason.startswith("malformed event: ")
    assert (quarantined.session_id, quarantined.version) == ("trip", 3)
    assert active_ids(views) == ["m1"]


# -- erasure ----------------------------------------------------------------------------------


def test_a_tombstone_the_views_see_first_makes_the_erased_sessions_row(
    views: MemoryViews, trip: Transcript
) -> None:
    started, *_ = collect(trip)
    tombstone = trip.erase()
    changes = project(views, entries([tombstone], first=8))
    assert changes.started == changes.erased == {TRIP_ID}
    row = changes.sessions[TRIP_ID]
    assert (row.session_id, row.source, row.model, row.parent_id, row.metadata) == (
        "trip",
        "cli",
        "m",
        None,
        {},
    )
    assert row.started_at == started.timestamp
    assert row.erased_at == row.last_event_at == tombstone.timestamp
    assert (row.version, row.message_count, row.active_count) == (8, 0, 0)
    assert changes.history_inserts == {} and changes.active_appends == []


def test_a_tombstone_removes_the_stored_rows_of_its_session_and_no_other(
    views: MemoryViews, trip: Transcript
) -> None:
    other = start("other")
    other.append(turns(2))
    project(views, [*entries(collect(trip)), *entries(collect(other), first=8)])
    changes = project(views, entries([trip.erase()], first=11))
    assert changes.started == set() and changes.erased == {TRIP_ID}
    assert views.sessions[TRIP_ID].erased_at is not None
    assert active_ids(views) == []
    assert len(active_ids(views, "other")) == 2


def test_a_tombstone_in_the_batch_of_the_events_it_erased_drops_their_pending_rows(
    views: MemoryViews, trip: Transcript
) -> None:
    trip.fail_compaction(
        compaction_id="cmp-f", based_on_version=7, failure="conflict", error="", reason="",
        would_supersede=[],
    )  # fmt: skip
    events = collect(trip)
    other = start("other")
    other.append(turns(1))
    broken = LogEntry(9, TRIP_ID, 9, Transcript.MessageAppended.TOPIC, undecodable="bad")
    batch = [*entries(events), *entries(collect(other), first=9), broken]
    changes = project(views, [*batch, *entries([trip.erase()], first=12)])
    assert {key[0] for key in changes.history_inserts} == {"other"}
    assert changes.attempts == [] and changes.quarantine == []
    assert changes.erased == {TRIP_ID}
    assert active_ids(views) == [] and len(active_ids(views, "other")) == 1
    assert changes.sessions[TRIP_ID].erased_at is not None


def test_an_event_after_the_tombstone_is_quarantined(views: MemoryViews, trip: Transcript) -> None:
    _, m1, *_ = collect(trip)
    tombstone = trip.erase()
    project(views, entries([tombstone], first=8))
    late = dataclasses.replace(m1, originator_version=9)
    again = dataclasses.replace(tombstone, originator_version=10)
    changes = project(views, entries([late, again], first=9))
    assert [q.reason for q in changes.quarantine] == [
        "an event of an erased session",
        "a second Erased event for one session",
    ]
    assert changes.history_inserts == {}
    assert views.sessions[TRIP_ID].message_count == 0
