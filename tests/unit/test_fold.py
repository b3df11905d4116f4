"""SessionFold, the reference semantics of every view: the events of one session folded into
its active list, its history with supersession marks, its compaction audit, and what an
erasure leaves."""

from __future__ import annotations

import dataclasses

import pytest

from support.events import collect, commit, start
from support.messages import TRIP, summary
from transcripts.domain.transcript import Transcript
from transcripts.projections.fold import SessionFold


@pytest.fixture
def transcript() -> Transcript:
    """The trip (m1 … m6), a committed compaction keeping m1 and m6, a failed one, and m7."""
    transcript = start("trip", source="cli", model="m", metadata={"cwd": "/"})
    transcript.append(TRIP)
    commit(
        transcript,
        [TRIP[0], summary("sum"), TRIP[5]],
        compaction_id="cmp-1",
        reason="over budget",
        tokens_before=400,
        tokens_after=100,
    )
    transcript.fail_compaction(
        compaction_id="cmp-2",
        based_on_version=transcript.version,
        failure="summarize_error",
        error="timed out",
        reason="again",
        would_supersede=["m1"],
    )
    transcript.append([{"id": "m7", "role": "user", "content": "after"}])
    return transcript


@pytest.fixture
def events(transcript: Transcript) -> list[Transcript.Event]:
    return collect(transcript)


def test_the_fold_of_a_start_holds_the_session_fields_and_nothing_else() -> None:
    [started] = collect(start("s", source="cli", model="m", parent_id="p", metadata={"a": 1}))
    fold = SessionFold.of([started])
    assert (fold.session_id, fold.source, fold.model, fold.parent_id) == ("s", "cli", "m", "p")
    assert fold.metadata == {"a": 1}
    assert fold.started_at == fold.last_event_at == started.timestamp
    assert (fold.version, fold.entries, fold.active_ids, fold.compactions) == (1, {}, [], [])
    assert fold.erased_at is None


def test_the_active_list_is_the_replacement_then_what_was_appended_after_it(
    events: list[Transcript.Event],
) -> None:
    fold = SessionFold.of(events)
    summary_id = events[7].added[0]["id"]
    assert fold.active_ids == ["m1", summary_id, "m6", "m7"]
    assert fold.active() == [
        TRIP[0],
        {"id": summary_id, **summary("sum")},
        TRIP[5],
        fold.active()[3],
    ]
    assert fold.active()[3] == {"id": "m7", "role": "user", "content": "after"}


def test_the_history_holds_every_message_in_storage_order_with_its_marks(
    events: list[Transcript.Event],
) -> None:
    fold = SessionFold.of(events)
    summary_id = events[7].added[0]["id"]
    history = fold.history()
    assert [entry["id"] for entry in history] == [*(m["id"] for m in TRIP), summary_id, "m7"]
    by_id = {entry["id"]: entry for entry in history}
    for superseded in ("m2", "m3", "m4", "m5"):
        assert by_id[superseded]["active"] is False
        assert by_id[superseded]["superseded_by"] == "cmp-1"
    for kept in ("m1", "m6", "m7"):
        assert (by_id[kept]["active"], by_id[kept]["superseded_by"]) == (True, None)
    assert by_id[summary_id]["added_by"] == "cmp-1"
    assert by_id["m3"]["message"] == TRIP[2]  # with its id
    assert fold.entries["m3"].appended_version == 4
    assert fold.entries[summary_id].appended_version == 8


def test_the_audit_lists_the_committed_and_the_failed_attempt_as_they_happened(
    events: list[Transcript.Event],
) -> None:
    committed, failed = SessionFold.of(events).compactions
    summary_id = events[7].added[0]["id"]
    assert committed == {
        "id": "cmp-1",
        "status": "committed",
        "reason": "over budget",
        "failure": None,
        "error": None,
        "superseded": ["m2", "m3", "m4", "m5"],
        "added": [summary_id],
        "based_on_version": 7,
        "tokens_before": 400,
        "tokens_after": 100,
        "at": events[7].timestamp,
        "version": 8,
        "metadata": None,
    }
    assert (failed["id"], failed["status"], failed["failure"], failed["error"]) == (
        "cmp-2",
        "failed",
        "summarize_error",
        "timed out",
    )
    assert (failed["superseded"], failed["added"], failed["version"]) == (["m1"], [], 9)


def test_version_and_last_event_are_the_last_events(events: list[Transcript.Event]) -> None:
    fold = SessionFold.of(events)
    assert (fold.version, fold.last_event_at) == (10, events[-1].timestamp)
    assert SessionFold.of(events[:8]).version == 8


def test_a_fold_replayed_up_to_any_version_is_the_state_right_after_that_event(
    events: list[Transcript.Event],
) -> None:
    assert SessionFold.of(events[:4]).active_ids == ["m1", "m2", "m3"]
    assert SessionFold.of(events[:7]).compactions == []
    assert len(SessionFold.of(events[:9]).compactions) == 2


def test_an_erased_session_keeps_only_what_its_tombstone_records(
    transcript: Transcript, events: list[Transcript.Event]
) -> None:
    tombstone = transcript.erase()
    fold = SessionFold.of([tombstone])  # the erasure deleted every earlier event
    assert (fold.session_id, fold.source, fold.model, fold.parent_id) == ("trip", "cli", "m", None)
    assert fold.started_at == events[0].timestamp
    assert fold.erased_at == fold.last_event_at == tombstone.timestamp
    assert (fold.metadata, fold.entries, fold.active_ids, fold.compactions) == ({}, {}, [], [])
    assert fold.version == tombstone.originator_version == 11
    assert fold.active() == [] and fold.history() == []


def test_a_tombstone_after_the_events_it_erased_leaves_only_its_record_too(
    transcript: Transcript, events: list[Transcript.Event]
) -> None:
    fold = SessionFold.of([*events, transcript.erase()])
    assert (fold.entries, fold.active_ids, fold.compactions, fold.metadata) == ({}, [], [], {})
    assert fold.erased_at is not None


def test_no_event_can_be_applied_after_the_tombstone(transcript: Transcript) -> None:
    tombstone = transcript.erase()
    fold = SessionFold.of([tombstone])
    late = dataclasses.replace(collect(start("trip"))[0], originator_version=12)
    with pytest.raises(ValueError, match="an event of an erased session"):
        fold.apply(late)


def test_a_compaction_of_messages_that_are_not_active_cannot_be_applied(
    events: list[Transcript.Event],
) -> None:
    compaction = events[7]
    with pytest.raises(ValueError, match=r"not active: it replaces 6 messages, 0 are active"):
        SessionFold.of([events[0], compaction])


def test_a_damaged_message_that_is_no_object_cannot_be_applied(
    events: list[Transcript.Event],
) -> None:
    damaged = dataclasses.replace(events[1], message=["not", "an", "object"])
    with pytest.raises(TypeError, match="message 'm1' is not a JSON object"):
        SessionFold.of([events[0], damaged])


def test_a_compaction_adding_a_message_without_a_role_is_left_out_whole(
    events: list[Transcript.Event],
) -> None:
    compaction = events[7]
    [summary_added] = compaction.added
    roleless = {**summary_added, "id": "extra", "message": {"content": "no role"}}
    damaged = dataclasses.replace(compaction, added=[summary_added, roleless])
    with pytest.raises(KeyError, match="has no role"):
        SessionFold.of([*events[:7], damaged])
    fold = SessionFold.of_readable([*events[:7], damaged])
    assert fold.history() == SessionFold.of(events[:7]).history()
    assert fold.compactions == []


@pytest.mark.parametrize(
    "damage",
    [
        {"order": None},
        {"order": ["m1", "ghost", "m6"]},
        {"added": [{"id": "m2", "message": {"role": "system", "content": "s"}}],
         "order": ["m1", "m2", "m6"]},
    ],
    ids=["no order", "an order naming an id neither kept nor added", "an added id stored"],
)  # fmt: skip
def test_a_compaction_that_cannot_be_applied_whole_is_left_out_whole(
    events: list[Transcript.Event], damage: dict
) -> None:
    damaged = dataclasses.replace(events[7], **damage)
    with pytest.raises((TypeError, ValueError)):
        SessionFold.of([*events[:7], damaged])
    fold = SessionFold.of_readable([*events[:7], damaged])
    before = SessionFold.of(events[:7])
    assert (fold.history(), fold.active_ids, fold.compactions) == (
        before.history(),
        before.active_ids,
        [],
    )


def test_of_readable_leaves_out_the_events_that_cannot_be_applied(
    events: list[Transcript.Event],
) -> None:
    damaged = dataclasses.replace(events[2], message="not an object")
    fold = SessionFold.of_readable([events[0], events[1], damaged, *events[3:7]])
    assert fold.active_ids == ["m1", "m3", "m4", "m5", "m6"]
    assert "m2" not in fold.entries


# -- rewinds and restores ---------------------------------------------------------------------


@pytest.fixture
def rewound() -> list[Transcript.Event]:
    """The trip; m4 … m6 rewound (version 8); m5 restored (version 9) — a result without its
    call may be restored: an append checks no pairing; m6 stays rewound."""
    transcript = start("trip")
    transcript.append(TRIP)
    transcript.rewind(["m4", "m5", "m6"], reason="undo")
    transcript.append([TRIP[4]])
    return collect(transcript)


def test_a_rewind_takes_messages_out_of_the_context_and_marks_them_in_the_history(
    rewound: list[Transcript.Event],
) -> None:
    fold = SessionFold.of(rewound[:8])
    assert fold.active_ids == ["m1", "m2", "m3"]
    by_id = {entry["id"]: entry for entry in fold.history()}
    assert [entry["id"] for entry in fold.history()] == [m["id"] for m in TRIP]
    for gone in ("m4", "m5", "m6"):
        assert by_id[gone] == {
            "id": gone,
            "active": False,
            "superseded_by": None,
            "added_by": None,
            "rewound": True,
            "message": TRIP[int(gone[1]) - 1],
        }
        assert fold.entries[gone].rewound_version == 8
    assert by_id["m1"]["rewound"] is False and fold.entries["m1"].rewound_version is None
    assert (fold.version, fold.compactions) == (8, [])  # a rewind is no compaction


def test_a_restore_makes_a_rewound_message_active_again_at_the_end_where_it_was_stored(
    rewound: list[Transcript.Event],
) -> None:
    fold = SessionFold.of(rewound)
    assert fold.active_ids == ["m1", "m2", "m3", "m5"]
    assert list(fold.entries) == [m["id"] for m in TRIP]  # the history keeps its order
    restored = fold.entries["m5"]
    assert (restored.active, restored.rewound_version, restored.restored_version) == (True, None, 9)
    assert restored.appended_version == 6  # when it was first stored
    assert fold.entries["m6"].rewound_version == 8 and fold.entries["m6"].restored_version is None


def test_a_rewind_of_messages_that_are_not_active_or_twice_one_cannot_be_applied(
    rewound: list[Transcript.Event],
) -> None:
    rewind = rewound[7]
    with pytest.raises(ValueError, match="not active"):
        SessionFold.of([*rewound[:8], rewind])  # m4 … m6 are rewound already
    with pytest.raises(ValueError, match="not active"):
        SessionFold.of([*rewound[:7], dataclasses.replace(rewind, message_ids=["m6", "m6"])])


def test_a_second_append_of_a_message_that_is_not_rewound_cannot_be_applied(
    rewound: list[Transcript.Event],
) -> None:
    with pytest.raises(ValueError, match="a second MessageAppended of message 'm1'"):
        SessionFold.of([*rewound[:7], rewound[1]])
