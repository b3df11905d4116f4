"""The Transcript aggregate alone: each command checks its rules before it triggers anything,
the events it triggers say what happened, and their replay rebuilds the same state."""

from __future__ import annotations

from typing import Any

import pytest
from eventsourcing.persistence import Mapper

from support.events import collect, commit, replay, start
from support.messages import TRIP, summary, tool_call, tool_exchange, tool_result, turns, without_id
from transcripts.adapters.storage.codec import OrjsonTranscoder
from transcripts.domain.compaction import (
    CONFLICT,
    INVALID_REPLACEMENT,
    ORPHANED_TOOL_RESULT,
    CompactionRejected,
)
from transcripts.domain.errors import (
    InvalidMessageError,
    MessageConflictError,
    MessageNotFoundError,
    SessionErasedError,
    TranscriptError,
)
from transcripts.domain.transcript import Transcript, transcript_id


def appended(messages: list[dict], session_id: str = "s") -> Transcript:
    """A transcript holding `messages`, its events collected."""
    transcript = start(session_id)
    transcript.append(messages)
    collect(transcript)
    return transcript


def ids(n: int, prefix: str = "m") -> list[dict]:
    return [{"id": f"{prefix}{i}", **message} for i, message in enumerate(turns(n), 1)]


# -- start ------------------------------------------------------------------------------------


def test_start_records_the_session_in_a_started_event_under_an_id_derived_from_it() -> None:
    transcript = start("s1", source="cli", model="m", parent_id="s0", metadata={"cwd": "/"})
    [started] = collect(transcript)
    assert isinstance(started, Transcript.Started)
    assert (started.session_id, started.source, started.model, started.parent_id) == (
        "s1",
        "cli",
        "m",
        "s0",
    )
    assert started.metadata == {"cwd": "/"}
    assert started.originator_id == transcript_id("s1")
    assert transcript_id("s1") != transcript_id("s2")
    assert started.originator_version == 1


@pytest.mark.parametrize(
    "fields",
    [
        {"session_id": ""},
        {"session_id": 7},
        {"source": None},
        {"model": 3},
        {"parent_id": ["s0"]},
        {"metadata": ["not", "an", "object"]},
        {"metadata": {"n": float("nan")}},
        {"source": "a\x00b"},
        {"session_id": "\ud800"},
    ],
    ids=[
        "an empty id",
        "an id that is no text",
        "no source",
        "a model that is no text",
        "a parent that is no text",
        "metadata that is no object",
        "metadata that is no JSON",
        "a NUL in the source",
        "a lone surrogate in the id",
    ],
)
def test_start_refuses_what_no_backend_can_store(fields: dict[str, Any]) -> None:
    given = {"session_id": "s", "source": "api", "model": None, "parent_id": None, "metadata": {}}
    given |= fields
    session_id = given.pop("session_id")
    with pytest.raises(TranscriptError):
        Transcript.start(session_id, **given)


def test_started_with_tells_the_same_start_from_another() -> None:
    transcript = start("s", source="cli", metadata={"a": 1})
    assert transcript.started_with(source="cli", model=None, parent_id=None, metadata={"a": 1})
    assert not transcript.started_with(source="cli", model="m", parent_id=None, metadata={"a": 1})
    assert not transcript.started_with(source="cli", model=None, parent_id=None, metadata={})


# -- append -----------------------------------------------------------------------------------


def test_append_keeps_given_ids_makes_up_the_missing_ones_and_returns_every_message_stored() -> (
    None
):
    transcript = appended([])
    stored = transcript.append([{"id": "q", "role": "user", "content": "hi"}, *turns(1, "a")])
    events = collect(transcript)
    assert stored[0] == {"id": "q", "role": "user", "content": "hi"}
    assert stored[1]["id"].startswith("msg_") and stored[1]["content"] == "a 0"
    assert [type(event) for event in events] == [Transcript.MessageAppended] * 2
    assert [event.message_id for event in events] == [m["id"] for m in stored]
    assert events[0].message == {"role": "user", "content": "hi"}  # the id is held apart
    assert transcript.active == [m["id"] for m in stored]


def test_an_appended_message_is_the_event_the_librarys_trigger_event_makes_stored_alike() -> None:
    messages = [{"id": "m1", **TRIP[0]}, {"role": "user", "content": [{"n": 1.5e-05}]}]
    lean = start()
    lean.append(messages, ["", "m2"])
    library = start()
    for message_id, content in (("m1", without_id(messages[0])), ("m2", messages[1])):
        library.trigger_event(
            Transcript.MessageAppended,
            message_id=message_id,
            message=content,
            content_hash=lean.hashes[message_id],
        )
    mapper: Mapper = Mapper(transcoder=OrjsonTranscoder())
    made, expected = collect(lean), collect(library)
    for event, reference in zip(made, expected, strict=True):
        object.__setattr__(event, "timestamp", reference.timestamp)
        assert type(event) is type(reference)
        assert list(vars(event).items()) == list(vars(reference).items())
        assert mapper.to_stored_event(event) == mapper.to_stored_event(reference)
    times = {"_created_on": None, "_modified_on": None}
    assert vars(lean) | times == vars(library) | times


def test_appending_a_stored_id_with_the_same_content_again_triggers_nothing() -> None:
    transcript = appended(ids(2))
    again = transcript.append([*ids(2), {"id": "m3", "role": "user", "content": "new"}])
    assert [event.message_id for event in collect(transcript)] == ["m3"]
    assert again == [*ids(2), {"id": "m3", "role": "user", "content": "new"}]
    assert transcript.active == ["m1", "m2", "m3"]


def test_a_stored_id_given_with_other_content_refuses_the_whole_call_before_any_event() -> None:
    transcript = appended(ids(2))
    with pytest.raises(MessageConflictError) as raised:
        transcript.append(
            [{"id": "new", "role": "user", "content": "fine"}, {**ids(1)[0], "content": "edited"}]
        )
    assert (raised.value.session_id, raised.value.message_id) == ("s", "m1")
    assert collect(transcript) == []
    assert transcript.active == ["m1", "m2"]


def test_one_call_giving_an_id_twice_stores_it_once_or_refuses_two_contents() -> None:
    transcript = appended([])
    message = {"id": "x", "role": "user", "content": "once"}
    assert transcript.append([message, message]) == [message, message]
    assert len(collect(transcript)) == 1
    with pytest.raises(MessageConflictError):
        transcript.append([{"id": "y", **summary("a")}, {"id": "y", **summary("b")}])
    assert collect(transcript) == []


def test_an_invalid_message_refuses_the_whole_call() -> None:
    transcript = appended([])
    with pytest.raises(InvalidMessageError):
        transcript.append([*turns(2), {"role": "robot", "content": "?"}])
    assert collect(transcript) == [] and transcript.active == []


# -- commit_compaction ------------------------------------------------------------------------


def test_a_commit_puts_the_replacement_first_and_supersedes_what_it_does_not_keep() -> None:
    transcript = appended(ids(4))
    kept = ids(4)[3]
    plan = transcript.commit_compaction(
        compaction_id="cmp-1",
        based_on_version=transcript.version,
        snapshot=["m1", "m2", "m3", "m4"],
        replacement=[summary(), kept],
        reason="over budget",
        tokens_before=900,
        tokens_after=100,
    )
    [event] = collect(transcript)
    assert isinstance(event, Transcript.CompactionCommitted)
    (new,) = event.added
    assert new["message"] == summary() and new["id"].startswith("msg_")
    assert (event.replaced, event.kept, event.order) == (4, ["m4"], [new["id"], "m4"])
    assert (event.based_on_version, event.reason) == (5, "over budget")
    assert (event.tokens_before, event.tokens_after) == (900, 100)
    assert plan.superseded == ["m1", "m2", "m3"]  # replaced, not kept: named by the count
    assert transcript.active == [new["id"], "m4"]
    assert transcript.fence_version == event.originator_version == 6


def test_messages_appended_after_the_attempt_began_stay_after_the_replacement() -> None:
    transcript = appended(ids(3))
    based_on, snapshot = transcript.version, list(transcript.active)
    transcript.append([{"id": "late", "role": "user", "content": "meanwhile"}])
    commit(transcript, [summary()], based_on_version=based_on, snapshot=snapshot)
    [_, event] = collect(transcript)
    assert event.replaced == 3  # the snapshot, not the message appended since
    assert transcript.active == [*event.order, "late"]


def test_an_attempt_begun_before_another_commit_is_rejected_as_a_conflict() -> None:
    transcript = appended(ids(3))
    begun, snapshot = transcript.version, list(transcript.active)
    commit(transcript, [summary("first"), ids(3)[2]], compaction_id="cmp-first")
    collect(transcript)
    with pytest.raises(CompactionRejected) as rejected:
        commit(
            transcript,
            [summary("late"), ids(3)[0]],
            compaction_id="cmp-late",
            based_on_version=begun,
            snapshot=snapshot,
        )
    assert rejected.value.failure == CONFLICT
    assert "another compaction committed or a rewind at version 5" in rejected.value.error
    assert rejected.value.would_supersede == ["m2", "m3"]  # what it would have superseded
    assert collect(transcript) == []


def test_an_attempt_begun_right_after_a_commit_is_no_conflict() -> None:
    transcript = appended(ids(3))
    commit(transcript, [summary("first")], compaction_id="cmp-first")
    commit(transcript, [summary("second")], compaction_id="cmp-second")
    first, second = collect(transcript)
    assert second.based_on_version == first.originator_version
    assert transcript.active == second.order


INVALID = {
    "a new id given twice": [
        {"id": "new", "role": "user", "content": "x"},
        {"id": "new", "role": "user", "content": "y"},
    ],
    "a kept message edited": [summary(), {"id": "m2", "role": "assistant", "content": "edited"}],
    "a message kept twice": [ids(2)[0], ids(2)[0]],
    "an invalid message": [summary(), {"role": "robot"}],
    "a lone message, not a list": summary(),
    "a string": "summary",
}


@pytest.mark.parametrize("replacement", INVALID.values(), ids=INVALID.keys())
def test_an_invalid_replacement_is_rejected_and_triggers_nothing(replacement: object) -> None:
    transcript = appended(ids(2))
    with pytest.raises(CompactionRejected) as rejected:
        commit(transcript, replacement)  # type: ignore[arg-type]
    assert rejected.value.failure == INVALID_REPLACEMENT
    assert rejected.value.would_supersede == ["m1", "m2"]
    assert collect(transcript) == []
    assert transcript.active == ["m1", "m2"]


def test_a_replacement_keeping_a_tool_result_without_its_call_is_rejected_as_orphaned() -> None:
    transcript = appended(TRIP)
    with pytest.raises(CompactionRejected) as rejected:
        commit(transcript, [summary(), TRIP[4], TRIP[5]])
    assert rejected.value.failure == ORPHANED_TOOL_RESULT
    assert "'m5'" in rejected.value.error and "'m4'" in rejected.value.error
    assert rejected.value.would_supersede == ["m1", "m2", "m3", "m4"]
    assert collect(transcript) == []


def test_a_tool_result_appended_after_the_attempt_began_keeps_its_call_from_going() -> None:
    call, result = tool_exchange("call_9")
    transcript = appended([{"id": "q", **turns(1)[0]}, {"id": "c", **call}])
    based_on, snapshot = transcript.version, list(transcript.active)
    transcript.append([{"id": "r", **result}])
    with pytest.raises(CompactionRejected) as rejected:
        commit(transcript, [summary()], based_on_version=based_on, snapshot=snapshot)
    assert rejected.value.failure == ORPHANED_TOOL_RESULT
    commit(
        transcript, [summary(), {"id": "c", **call}], based_on_version=based_on, snapshot=snapshot
    )
    assert transcript.active[1:] == ["c", "r"]


def test_superseding_a_call_together_with_its_result_commits() -> None:
    transcript = appended(TRIP)
    commit(transcript, [summary(), TRIP[5]])
    [event] = collect(transcript)
    assert (event.replaced, event.kept) == (6, ["m6"])


def test_a_snapshot_that_is_not_the_start_of_the_active_list_is_a_conflict() -> None:
    """(An attempt read from damaged views: its commit is refused, and recorded.)"""
    transcript = appended(ids(3))
    with pytest.raises(CompactionRejected, match="snapshot is not the active list") as raised:
        commit(transcript, [summary()], snapshot=["m2", "m3"])
    assert raised.value.failure == CONFLICT
    assert collect(transcript) == []


def test_a_settled_compaction_id_can_neither_commit_nor_fail_again() -> None:
    transcript = appended(ids(2))
    commit(transcript, [summary()], compaction_id="cmp-1")
    with pytest.raises(TranscriptError, match="already committed or failed"):
        commit(transcript, [summary()], compaction_id="cmp-1")
    with pytest.raises(TranscriptError, match="already committed or failed"):
        transcript.fail_compaction(
            compaction_id="cmp-1", based_on_version=1, failure="x", error="e", reason="",
            would_supersede=[],
        )  # fmt: skip
    assert len(collect(transcript)) == 1


# -- fail_compaction --------------------------------------------------------------------------


def test_a_failed_compaction_is_recorded_and_changes_nothing_else() -> None:
    transcript = appended(ids(2))
    transcript.fail_compaction(
        compaction_id="cmp-f",
        based_on_version=3,
        failure="summarize_error",
        error="timed out\x00 \udcff",
        reason="over\x00budget",
        would_supersede=["m1"],
        tokens_before=50,
    )
    [event] = collect(transcript)
    assert isinstance(event, Transcript.CompactionFailed)
    assert (event.failure, event.would_supersede, event.tokens_before) == (
        "summarize_error",
        ["m1"],
        50,
    )
    assert event.error == "timed out\\x00 \\udcff"  # storable text: NUL and surrogates escaped
    assert event.reason == "over\\x00budget"
    assert transcript.active == ["m1", "m2"]
    assert transcript.fence_version == 0
    assert "cmp-f" in transcript.compaction_ids


# -- rewind -----------------------------------------------------------------------------------


def rewound(transcript: Transcript, **target: Any) -> list[str]:
    """Rewind as the store does: the target decided, then taken out (reason "undo")."""
    return transcript.rewind(transcript.rewind_target(**target), reason="undo")


def test_a_rewind_of_the_last_count_takes_them_out_in_one_event_and_keeps_them_stored() -> None:
    transcript = appended(ids(4))
    assert rewound(transcript, count=2, to=None) == ["m3", "m4"]
    [event] = collect(transcript)
    assert isinstance(event, Transcript.Rewound)
    assert (event.message_ids, event.reason) == (["m3", "m4"], "undo")
    assert transcript.active == ["m1", "m2"]
    assert set(transcript.hashes) == {"m1", "m2", "m3", "m4"}
    assert transcript.rewound == {"m3", "m4"}


def test_a_count_over_the_active_list_rewinds_all_of_it_and_nothing_left_writes_nothing() -> None:
    transcript = appended(ids(3))
    assert rewound(transcript, count=10, to=None) == ["m1", "m2", "m3"]
    assert transcript.active == [] and len(collect(transcript)) == 1
    assert rewound(transcript, count=1, to=None) == []
    assert collect(transcript) == []


def test_a_rewind_to_a_message_takes_out_every_active_message_after_it() -> None:
    transcript = appended(ids(4))
    assert rewound(transcript, count=None, to="m2") == ["m3", "m4"]
    assert transcript.active == ["m1", "m2"]
    collect(transcript)
    assert rewound(transcript, count=None, to="m2") == []  # the last active: nothing to do
    assert collect(transcript) == []


def test_a_rewind_to_a_message_that_is_not_active_is_refused_before_any_event() -> None:
    transcript = appended(ids(4))
    commit(transcript, [summary(), *ids(4)[1:]])  # m1 superseded
    rewound(transcript, count=1, to=None)  # m4 rewound
    collect(transcript)
    with pytest.raises(MessageNotFoundError) as never:
        rewound(transcript, count=None, to="never-stored")
    assert (never.value.session_id, never.value.message_id) == ("s", "never-stored")
    for stored in ("m1", "m4"):
        with pytest.raises(TranscriptError, match=f"message '{stored}' of session 's' is not"):
            rewound(transcript, count=None, to=stored)
    assert collect(transcript) == []


def test_rewinding_ids_none_of_which_is_active_any_more_triggers_nothing() -> None:
    transcript = appended(ids(3))
    decided = transcript.rewind_target(count=2, to=None)
    assert transcript.rewind(decided, reason="") == ["m2", "m3"]
    collect(transcript)
    assert transcript.rewind(decided, reason="") == []  # a retry of a rewind that landed
    assert collect(transcript) == []


def test_appending_a_rewound_id_with_its_content_restores_it_at_the_end() -> None:
    transcript = appended(ids(3))
    rewound(transcript, count=2, to=None)
    transcript.append([{"id": "x", **summary("new")}])
    collect(transcript)
    again = transcript.append([ids(3)[1], ids(3)[1]])  # once restored, the second is a no-op
    [event] = collect(transcript)
    assert isinstance(event, Transcript.MessageAppended)
    assert (event.message_id, event.message) == ("m2", without_id(ids(3)[1]))
    assert again == [ids(3)[1], ids(3)[1]]
    assert transcript.active == ["m1", "x", "m2"]
    assert transcript.rewound == {"m3"}


def test_a_rewound_id_with_other_content_conflicts_and_without_restore_is_skipped() -> None:
    transcript = appended(ids(2))
    rewound(transcript, count=1, to=None)
    collect(transcript)
    with pytest.raises(MessageConflictError):
        transcript.append([{**ids(2)[1], "content": "edited"}])
    assert transcript.append([ids(2)[1]], restore=False) == [ids(2)[1]]  # as `sync` does
    assert collect(transcript) == []
    assert transcript.active == ["m1"]


def test_appending_a_superseded_id_again_stays_a_no_op() -> None:
    transcript = appended(ids(3))
    commit(transcript, [summary(), ids(3)[2]])
    collect(transcript)
    transcript.append(ids(3))
    assert collect(transcript) == []
    assert "m1" not in transcript.active and "m1" not in transcript.rewound


def test_an_attempt_begun_before_a_rewind_is_rejected_as_a_conflict() -> None:
    transcript = appended(ids(3))
    begun, snapshot = transcript.version, list(transcript.active)
    rewound(transcript, count=1, to=None)
    rewind_version = transcript.version
    with pytest.raises(CompactionRejected) as rejected:
        commit(transcript, [summary()], based_on_version=begun, snapshot=snapshot)
    assert rejected.value.failure == CONFLICT
    assert f"a rewind at version {rewind_version}" in rejected.value.error
    commit(transcript, [summary()])  # begun after the rewind: commits
    assert transcript.active[1:] == []


def test_a_rewind_cutting_between_a_call_and_its_results_keeps_the_call_with_its_kept_result() -> (
    None
):
    call = tool_call("call_1")
    results = [{"id": f"r{i}", **tool_result("call_1", f"part {i}")} for i in (1, 2)]
    transcript = appended([{"id": "q", **turns(1)[0]}, {"id": "c", **call}, *results])
    assert rewound(transcript, count=1, to=None) == ["r2"]
    assert rewound(transcript, count=None, to="q") == ["c", "r1"]  # the call and its result
    assert transcript.active == ["q"]
    assert transcript.calls == {} and transcript.answers == {}


def test_a_rewind_leaving_a_result_appended_before_its_call_without_it_is_refused() -> None:
    call, result = tool_exchange("call_7")
    transcript = appended([{"id": "r", **result}, {"id": "c", **call}])
    with pytest.raises(TranscriptError, match="would leave tool message 'r'"):
        rewound(transcript, count=1, to=None)
    assert collect(transcript) == [] and transcript.active == ["r", "c"]
    assert rewound(transcript, count=2, to=None) == ["r", "c"]


# -- erase ------------------------------------------------------------------------------------


def test_erase_triggers_a_tombstone_with_what_the_session_held() -> None:
    transcript = appended(ids(3), session_id="gone")
    commit(transcript, [summary()], compaction_id="cmp-1")
    transcript.fail_compaction(
        compaction_id="cmp-2", based_on_version=5, failure="conflict", error="e", reason="",
        would_supersede=[],
    )  # fmt: skip
    collect(transcript)
    tombstone = transcript.erase()
    assert collect(transcript) == [tombstone]
    assert (tombstone.session_id, tombstone.source, tombstone.model) == ("gone", "api", None)
    assert tombstone.started_at == transcript.created_on
    assert tombstone.messages == 4  # three appended and the summary
    assert (tombstone.compactions_committed, tombstone.compactions_failed) == (1, 1)
    assert transcript.active == [] and transcript.hashes == {} and transcript.metadata == {}


def test_an_erased_transcript_refuses_every_command() -> None:
    transcript = appended(ids(1))
    transcript.erase()
    commands = [
        lambda: transcript.append(turns(1)),
        lambda: commit(transcript, [summary()], snapshot=[]),
        lambda: transcript.fail_compaction(
            compaction_id="c",
            based_on_version=1,
            failure="x",
            error="",
            reason="",
            would_supersede=[],
        ),  # fmt: skip
        lambda: transcript.started_with(source="api", model=None, parent_id=None, metadata={}),
        lambda: transcript.rewind_target(count=1, to=None),
        lambda: transcript.rewind([], reason=""),
    ]
    for command in commands:
        with pytest.raises(SessionErasedError, match="'s' was erased at"):
            command()


def test_erasing_again_triggers_nothing_and_returns_the_first_tombstone() -> None:
    transcript = appended(ids(1))
    first = transcript.erase()
    collect(transcript)
    assert transcript.erase() is first
    assert collect(transcript) == []


def test_the_tombstone_replays_as_the_first_and_only_event_into_an_erased_transcript() -> None:
    transcript = appended(ids(2), session_id="gone")
    tombstone = transcript.erase()
    replayed = replay([tombstone])  # the erasure deleted every earlier event
    assert (replayed.session_id, replayed.source) == ("gone", "api")
    assert replayed.version == tombstone.originator_version == 4
    assert replayed.id == transcript_id("gone")
    assert replayed.erasure == tombstone
    with pytest.raises(SessionErasedError):
        replayed.append(turns(1))


# -- replay -----------------------------------------------------------------------------------


def test_replaying_the_events_rebuilds_the_active_list_hashes_and_fencing_state() -> None:
    transcript = start("s")
    transcript.append(TRIP)
    commit(transcript, [summary(), *TRIP[3:]], compaction_id="cmp-1")
    transcript.append(ids(1, prefix="after"))
    transcript.fail_compaction(
        compaction_id="cmp-2", based_on_version=9, failure="summarize_error", error="e",
        reason="", would_supersede=[],
    )  # fmt: skip
    replayed = replay(collect(transcript))
    assert replayed.rewound == set()
    assert replayed.active == transcript.active
    assert replayed.hashes == transcript.hashes
    assert (replayed.calls, replayed.answers) == (transcript.calls, transcript.answers)
    assert replayed.fence_version == transcript.fence_version == 8
    assert replayed.compaction_ids == {"cmp-1", "cmp-2"}
    assert replayed.version == transcript.version == 10


def test_replaying_rewinds_and_restores_rebuilds_the_rewound_ids_and_the_fence() -> None:
    transcript = start("s")
    transcript.append(TRIP)
    rewound(transcript, count=3, to=None)
    transcript.append([TRIP[3]])  # m4 restored; m5 and m6 stay rewound
    replayed = replay(collect(transcript))
    assert replayed.active == transcript.active == ["m1", "m2", "m3", "m4"]
    assert replayed.rewound == transcript.rewound == {"m5", "m6"}
    assert (replayed.calls, replayed.answers) == (transcript.calls, transcript.answers)
    assert replayed.fence_version == transcript.fence_version == 8
