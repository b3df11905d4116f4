"""The compaction contract alone: how a replacement is planned against a snapshot, what it
would supersede, and the tool-call pairing a result must keep."""

from __future__ import annotations

import pytest

from support.messages import TRIP, summary
from transcripts.domain.compaction import (
    INVALID_REPLACEMENT,
    ORPHANED_TOOL_RESULT,
    CompactionRejected,
    check_tool_pairing,
    pairing_facts,
    plan_compaction,
    would_supersede,
)
from transcripts.domain.messages import content_hash, split_id

SNAPSHOT = [message["id"] for message in TRIP]  # m1 … m6
HASHES = {message_id: content_hash(content) for message_id, content in map(split_id, TRIP)}
M = {message["id"]: message for message in TRIP}
# m7: stored after the snapshot was taken
STORED = {**HASHES, "m7": content_hash({"role": "user", "content": "later"})}


def pairing(messages: list[dict]) -> tuple[dict[str, str], dict[str, str]]:
    calls: dict[str, str] = {}
    answers: dict[str, str] = {}
    for message in messages:
        message_id, content = split_id(message)
        assert message_id is not None
        new_calls, new_answers = pairing_facts(message_id, content)
        calls |= new_calls
        answers |= new_answers
    return calls, answers


# -- plan_compaction --------------------------------------------------------------------------


def test_a_plan_keeps_the_items_with_snapshot_ids_adds_the_others_and_supersedes_the_rest() -> None:
    plan = plan_compaction(SNAPSHOT, [M["m1"], summary("sum"), M["m6"]], HASHES)
    (new,) = plan.added
    assert new.content == summary("sum")
    assert new.content_hash == content_hash(summary("sum"))
    assert new.id.startswith("msg_")
    assert plan.order == ["m1", new.id, "m6"]
    assert plan.kept == ["m1", "m6"]
    assert plan.superseded == ["m2", "m3", "m4", "m5"]  # in snapshot order


def test_a_plan_follows_the_replacement_order_not_the_snapshot_order() -> None:
    plan = plan_compaction(SNAPSHOT, [M["m6"], M["m2"]], HASHES)
    assert plan.order == ["m6", "m2"] and plan.kept == ["m6", "m2"]
    assert plan.superseded == ["m1", "m3", "m4", "m5"]


def test_every_new_message_gets_its_own_id() -> None:
    plan = plan_compaction(SNAPSHOT, [summary("a"), summary("a")], HASHES)
    assert len({new.id for new in plan.added}) == 2
    assert plan.superseded == SNAPSHOT


def test_an_item_with_an_id_the_session_never_stored_is_a_new_message_under_that_id() -> None:
    plan = plan_compaction(SNAPSHOT, [{"id": "sum-uuid", **summary("sum")}, M["m6"]], STORED)
    (new,) = plan.added
    assert (new.id, new.content, new.content_hash) == (
        "sum-uuid",
        summary("sum"),
        content_hash(summary("sum")),
    )
    assert plan.order == ["sum-uuid", "m6"] and plan.kept == ["m6"]
    assert plan.superseded == ["m1", "m2", "m3", "m4", "m5"]


def test_an_empty_replacement_supersedes_the_whole_snapshot() -> None:
    plan = plan_compaction(SNAPSHOT, [], HASHES)
    assert (plan.order, plan.kept, plan.added, plan.superseded) == ([], [], [], SNAPSHOT)


REJECTED = {
    "a string": ("summary", "must be a list of messages, not str"),
    "a lone message": (summary(), "must be a list of messages, not dict"),
    "an id stored outside the snapshot": (
        [summary(), {"id": "m7", "role": "user", "content": "later"}],
        "replacement item 1 has id 'm7', a message the session stored outside the snapshot",
    ),
    "a new id given twice": (
        [{"id": "sum", **summary("a")}, {"id": "sum", **summary("b")}],
        "replacement item 1 repeats the new id 'sum'",
    ),
    "a message kept twice": ([M["m2"], M["m2"]], "replacement keeps message 'm2' twice"),
    "a kept message edited": (
        [{**M["m3"], "content": "Only Sintra."}],
        "replacement item 0 keeps message 'm3' but changes its content",
    ),
    "an invalid item": ([summary(), {"content": "no role"}], "replacement item 1: message role"),
}


@pytest.mark.parametrize(("replacement", "says"), REJECTED.values(), ids=REJECTED.keys())
def test_an_invalid_replacement_is_rejected_naming_the_item_and_superseding_nothing(
    replacement: object, says: str
) -> None:
    with pytest.raises(CompactionRejected) as rejected:
        plan_compaction(SNAPSHOT, replacement, STORED)
    assert rejected.value.failure == INVALID_REPLACEMENT
    assert says in rejected.value.error
    assert rejected.value.would_supersede == SNAPSHOT


# -- would_supersede --------------------------------------------------------------------------


def test_would_supersede_names_the_snapshot_ids_a_replacement_does_not_keep() -> None:
    assert would_supersede(SNAPSHOT, [summary(), M["m5"], {"id": "m1"}]) == ["m2", "m3", "m4", "m6"]


@pytest.mark.parametrize(
    "replacement",
    ["m1 m2", summary(), None, 42, [{"id": 1}, "m1", ["m2"]]],
    ids=["a string", "a lone message", "nothing", "a number", "items without a text id"],
)
def test_would_supersede_of_what_keeps_nothing_is_the_whole_snapshot(replacement: object) -> None:
    assert would_supersede(SNAPSHOT, replacement) == SNAPSHOT


# -- check_tool_pairing -----------------------------------------------------------------------


def test_a_result_keeping_a_call_before_its_tool_result_passes() -> None:
    calls, answers = pairing(TRIP)
    assert calls == {"call_1": "m4"} and answers == {"m5": "call_1"}
    check_tool_pairing(["m1", "m4", "m5", "m6"], calls, answers, ["m2", "m3"])


@pytest.mark.parametrize(
    "result",
    [["m1", "m5", "m6"], ["m5", "m4", "m6"]],
    ids=["without its call", "before its call"],
)
def test_a_tool_result_without_its_call_before_it_is_rejected_as_orphaned(
    result: list[str],
) -> None:
    calls, answers = pairing(TRIP)
    with pytest.raises(CompactionRejected) as rejected:
        check_tool_pairing(result, calls, answers, ["m2"])
    assert rejected.value.failure == ORPHANED_TOOL_RESULT
    assert rejected.value.error.startswith("tool message 'm5' would come without the assistant")
    assert "'m4' that makes call 'call_1'" in rejected.value.error
    assert rejected.value.would_supersede == ["m2"]


def test_a_tool_result_of_a_call_never_in_the_transcript_is_not_checked() -> None:
    calls, answers = pairing(
        [{"id": "t", "role": "tool", "tool_call_id": "call_old", "content": "x"}]
    )
    assert answers == {"t": "call_old"} and calls == {}
    check_tool_pairing(["t"], calls, answers, [])


def test_every_call_of_an_assistant_message_is_paired_with_that_message() -> None:
    two_calls = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "a", "type": "function"}, {"id": "b"}, {"no": "id"}, "junk"],
    }
    calls, answers = pairing_facts("m", two_calls)
    assert (calls, answers) == ({"a": "m", "b": "m"}, {})


def test_only_assistant_messages_make_calls_and_only_tool_messages_answer_them() -> None:
    assert pairing_facts(
        "u", {"role": "user", "tool_calls": [{"id": "x"}], "tool_call_id": "x"}
    ) == ({}, {})
    assert pairing_facts("t", {"role": "tool", "tool_call_id": 5}) == ({}, {})
