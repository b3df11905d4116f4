"""rewind: one Rewound event takes the tail of the active context out of it (the last `count`
messages, or every one after the active message `to`); the messages stay in the history,
marked rewound, and `append` restores one. It is fenced like a compaction, and is none."""

from __future__ import annotations

from typing import Any

import pytest

from support.messages import ids, summary, tool_call, tool_result
from transcripts import (
    MessageConflictError,
    MessageNotFoundError,
    SessionErasedError,
    SessionNotFoundError,
    TranscriptError,
    TranscriptStore,
)


def types(store: TranscriptStore, session_id: str) -> list[str]:
    return [event["type"] for event in store.events(session_id)]


def marks(store: TranscriptStore, session_id: str) -> dict[str, tuple[bool, bool]]:
    """(active, rewound) of every stored message, by id."""
    return {e["id"]: (e["active"], e["rewound"]) for e in store.history(session_id)}


@pytest.fixture
def five(store: TranscriptStore, session: str, turns) -> list[dict]:
    """Five turns stored in the session."""
    return store.append(session, turns(5))


def test_a_rewind_of_one_returns_the_popped_message_and_takes_it_out_of_the_context(
    store: TranscriptStore, session: str, five: list[dict]
) -> None:
    assert store.rewind(session, count=1, reason="pop") == [five[-1]]
    assert store.active(session) == five[:-1]
    assert marks(store, session)[five[-1]["id"]] == (False, True)
    [event] = store.events(session)[-1:]
    assert (event["type"], event["data"]) == (
        "Rewound",
        {"message_ids": [five[-1]["id"]], "reason": "pop"},
    )


def test_rewound_messages_stay_in_the_history_where_they_were_and_are_no_compaction(
    store: TranscriptStore, session: str, five: list[dict]
) -> None:
    assert store.rewind(session, count=2) == five[3:]
    history = store.history(session)
    assert [entry["message"] for entry in history] == five
    assert [entry["rewound"] for entry in history] == [False] * 3 + [True] * 2
    assert all(entry["superseded_by"] is None for entry in history)
    assert store.compactions(session) == []
    [summary_row] = [s for s in store.sessions() if s["id"] == session]
    assert (summary_row["messages"], summary_row["active"], summary_row["rewound"]) == (5, 3, 2)
    assert summary_row["compactions_committed"] == summary_row["compactions_failed"] == 0


def test_a_count_over_the_context_clears_it_and_the_session_stays_usable(
    store: TranscriptStore, session: str, five: list[dict], turns
) -> None:
    assert store.rewind(session, count=1000) == five
    assert store.active(session) == []
    after = store.append(session, turns(1, prefix="again"))
    assert store.active(session) == after
    assert len(store.history(session)) == 6
    assert store.verify_projections().ok


def test_a_rewind_of_more_messages_than_one_query_reads_returns_them_all_in_order(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(1201))  # the views read them 500 ids a query
    assert store.rewind(session, count=1200) == stored[1:]
    assert store.active(session) == stored[:1]


def test_a_rewind_to_a_message_takes_out_every_active_message_after_it(
    store: TranscriptStore, session: str, five: list[dict]
) -> None:
    assert store.rewind(session, to=five[1]["id"]) == five[2:]
    assert store.active(session) == five[:2]


def test_a_rewind_that_takes_nothing_out_writes_nothing(
    store: TranscriptStore, session: str, five: list[dict]
) -> None:
    events = store.events(session)
    assert store.rewind(session, to=five[-1]["id"]) == []  # the last active message
    assert store.events(session) == events
    store.rewind(session, count=5)
    events = store.events(session)
    assert store.rewind(session, count=1) == []  # an empty context
    assert store.events(session) == events


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"count": 1, "to": "m1"},
        {"count": 0},
        {"count": -1},
        {"count": True},
        {"count": "2"},
        {"count": 2**63},
        {"to": 5},
        {"count": 1, "reason": 3},
    ],
    ids=[
        "neither count nor to",
        "both",
        "a count of 0",
        "a negative count",
        "a bool",
        "a string count",
        "a count past 64 bits",
        "a to that is no id",
        "a reason that is no text",
    ],
)
def test_arguments_other_than_one_count_or_one_to_are_refused_before_anything_is_written(
    store: TranscriptStore, session: str, five: list[dict], arguments: dict[str, Any]
) -> None:
    events = store.events(session)
    with pytest.raises(TranscriptError):
        store.rewind(session, **arguments)
    assert store.events(session) == events


def test_a_rewind_to_a_message_that_is_not_active_is_refused_and_writes_nothing(
    store: TranscriptStore, session: str, five: list[dict]
) -> None:
    result = store.compact(session, lambda messages: [summary(), *messages[2:]])
    store.rewind(session, count=1)
    events = store.events(session)
    with pytest.raises(MessageNotFoundError):
        store.rewind(session, to="never-stored")
    superseded, rewound = five[0]["id"], five[-1]["id"]
    for stored in (superseded, rewound):
        with pytest.raises(TranscriptError, match="is not active"):
            store.rewind(session, to=stored)
    assert store.events(session) == events
    assert store.active(session) == result.messages[:-1]


def test_forgetting_a_session_with_rewound_messages_counts_them_stored_and_keeps_no_mark(
    store: TranscriptStore, session: str, five: list[dict]
) -> None:
    store.rewind(session, count=2, reason="undo")
    erasure = store.forget(session)
    assert (erasure.messages, erasure.events) == (5, 7)
    [summary_row] = [s for s in store.sessions() if s["id"] == session]
    assert (summary_row["messages"], summary_row["active"], summary_row["rewound"]) == (0, 0, 0)
    assert [event["type"] for event in store.events(session)] == ["Erased"]


def test_a_rewind_of_an_unknown_or_erased_session_is_refused(
    store: TranscriptStore, session: str, five: list[dict]
) -> None:
    with pytest.raises(SessionNotFoundError):
        store.rewind("never-started", count=1)
    store.forget(session)
    with pytest.raises(SessionErasedError):
        store.rewind(session, count=1)


# -- restore ----------------------------------------------------------------------------------


def test_appending_a_rewound_message_again_restores_it_at_the_end_of_the_context(
    store: TranscriptStore, session: str, five: list[dict], turns
) -> None:
    popped = store.rewind(session, count=2)
    new = store.append(session, turns(1, prefix="new"))
    assert store.append(session, [popped[0]]) == [popped[0]]
    assert store.active(session) == [*five[:3], *new, popped[0]]
    assert types(store, session)[-3:] == ["Rewound", "MessageAppended", "MessageAppended"]
    history = store.history(session)
    assert [entry["id"] for entry in history] == ids([*five, *new])  # its place is kept
    assert marks(store, session)[popped[0]["id"]] == (True, False)
    assert marks(store, session)[popped[1]["id"]] == (False, True)
    assert store.verify_projections().ok


def test_a_rewound_id_given_with_other_content_is_a_conflict_and_stores_nothing(
    store: TranscriptStore, session: str, five: list[dict]
) -> None:
    [popped] = store.rewind(session, count=1)
    events = store.events(session)
    with pytest.raises(MessageConflictError):
        store.append(session, [{**popped, "content": "edited"}])
    assert store.events(session) == events


def test_a_stale_list_synced_after_a_rewind_does_not_bring_the_rewound_messages_back(
    store: TranscriptStore, session: str, five: list[dict], turns
) -> None:
    store.rewind(session, count=2)
    events = store.events(session)
    assert store.sync(session, five) == five[:3]
    assert store.events(session) == events
    new = turns(1, prefix="new")
    active = store.sync(session, [*five, *new])
    assert active[:3] == five[:3] and [m["content"] for m in active[3:]] == ["new 0"]


def test_appending_a_message_a_compaction_superseded_stays_a_no_op(
    store: TranscriptStore, session: str, five: list[dict]
) -> None:
    result = store.compact(session, lambda messages: [summary(), messages[-1]])
    events = store.events(session)
    assert store.append(session, five[:2]) == five[:2]
    assert store.events(session) == events
    assert store.active(session) == result.messages


# -- fencing, tool results, reads ---------------------------------------------------------------


def test_an_attempt_begun_before_a_rewind_fails_to_commit_with_conflict(
    store: TranscriptStore, session: str, five: list[dict], observe, check_failed
) -> None:
    attempt = store.begin_compaction(session)
    store.rewind(session, count=1)
    before = observe(store, session)
    result = store.commit_compaction(attempt, [summary()])
    check_failed(store, session, result, before, "conflict")
    assert "a rewind at version" in (result.error or "")
    later = store.compact(session, lambda messages: [summary(), messages[-1]])
    assert later.committed and later.messages[1] == five[3]


def test_a_rewind_cut_between_a_call_and_its_results_never_leaves_a_result_without_its_call(
    store: TranscriptStore, session: str
) -> None:
    question, call, first, second = store.append(
        session,
        [
            {"role": "user", "content": "weather?"},
            tool_call("call_1"),
            tool_result("call_1", "sunny"),
            tool_result("call_1", "windy"),
        ],
    )
    assert store.rewind(session, count=1) == [second]
    assert store.active(session) == [question, call, first]
    assert store.rewind(session, to=question["id"]) == [call, first]
    assert store.active(session) == [question]


def test_a_rewind_that_would_leave_a_result_appended_before_its_call_alone_is_refused(
    store: TranscriptStore, session: str
) -> None:
    early, call = store.append(session, [tool_result("call_9"), tool_call("call_9")])
    events = store.events(session)
    with pytest.raises(TranscriptError, match="would leave tool message"):
        store.rewind(session, count=1)
    assert store.events(session) == events
    assert store.rewind(session, count=2) == [early, call]


def test_explain_says_which_rewind_took_a_message_out_and_which_append_restored_it(
    store: TranscriptStore, session: str, five: list[dict]
) -> None:
    popped, still_out = store.rewind(session, count=2, reason="undo")
    store.append(session, [popped])
    rewind, restore = store.events(session)[-2:]
    explained = store.explain(session, still_out["id"])
    assert explained["active"] is False and explained["position"] is None
    assert explained["superseded"] is None and explained["restored"] is None
    assert explained["rewound"] == {
        "event": "Rewound",
        "version": rewind["version"],
        "at": rewind["at"],
        "reason": "undo",
    }
    explained = store.explain(session, popped["id"])
    assert (explained["active"], explained["position"], explained["rewound"]) == (True, 4, None)
    assert explained["restored"] == {
        "event": "MessageAppended",
        "version": restore["version"],
        "at": restore["at"],
    }
    assert explained["added"]["version"] == 5  # the append that first stored it


def test_time_travel_sees_the_context_before_and_after_a_rewind(
    store: TranscriptStore, session: str, five: list[dict]
) -> None:
    store.rewind(session, count=3)
    rewind_version = store.events(session)[-1]["version"]
    assert store.active_at(session, rewind_version - 1) == five
    assert store.active_at(session, rewind_version) == five[:2]


def test_search_finds_rewound_messages_they_are_history(
    store: TranscriptStore, session: str
) -> None:
    store.append(session, [{"role": "user", "content": "zebras at dawn"}])
    [popped] = store.rewind(session, count=1)
    [hit] = store.search("zebra")
    assert (hit["message_id"], hit["active"]) == (popped["id"], False)
    assert store.search("zebra", active_only=True) == []
    store.append(session, [popped])
    assert [h["active"] for h in store.search("zebra", active_only=True)] == [True]
