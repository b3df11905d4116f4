"""A compaction must not separate a tool result from the assistant message that made its
call: otherwise it fails with orphaned_tool_result and changes nothing."""

from __future__ import annotations

import pytest

from support.messages import ids, summary, tool_call, tool_result
from transcripts import TranscriptStore


@pytest.fixture
def exchange(store: TranscriptStore, session: str) -> list[dict]:
    """user question, assistant making call_1, the tool result of call_1, assistant answer."""
    return store.append(
        session,
        [
            {"role": "user", "content": "weather?"},
            tool_call("call_1"),
            tool_result("call_1"),
            {"role": "assistant", "content": "It is sunny."},
        ],
    )


def test_keeping_a_tool_result_without_its_call_fails_with_orphaned_tool_result(
    store: TranscriptStore, session: str, exchange: list[dict], observe, check_failed
) -> None:
    question, assistant, tool, answer = exchange
    before = observe(store, session)
    result = store.compact(session, lambda messages: [summary(), tool, answer])
    entry = check_failed(store, session, result, before, "orphaned_tool_result")
    assert entry["superseded"] == [question["id"], assistant["id"]]
    assert tool["id"] in result.error


def test_keeping_a_tool_result_before_its_call_fails_with_orphaned_tool_result(
    store: TranscriptStore, session: str, exchange: list[dict], observe, check_failed
) -> None:
    question, assistant, tool, answer = exchange
    before = observe(store, session)
    result = store.compact(session, lambda messages: [summary(), tool, assistant, answer])
    entry = check_failed(store, session, result, before, "orphaned_tool_result")
    assert entry["superseded"] == [question["id"]]


def test_keeping_a_call_and_its_tool_result_in_order_commits(
    store: TranscriptStore, session: str, exchange: list[dict]
) -> None:
    question, assistant, tool, answer = exchange
    result = store.compact(session, lambda messages: [summary(), assistant, tool, answer])
    assert result.committed
    assert ids(store.active(session))[1:] == ids([assistant, tool, answer])


def test_superseding_a_call_together_with_its_tool_result_commits(
    store: TranscriptStore, session: str, exchange: list[dict]
) -> None:
    result = store.compact(session, lambda messages: [summary(), messages[-1]])
    assert result.committed


def test_a_tool_result_appended_after_the_attempt_began_keeps_its_call_from_being_superseded(
    store: TranscriptStore, session: str, observe, check_failed
) -> None:
    store.append(session, [{"role": "user", "content": "weather?"}, tool_call("call_9")])
    attempt = store.begin_compaction(session)
    store.append(session, [tool_result("call_9")])
    before = observe(store, session)
    result = store.commit_compaction(attempt, [summary()])
    check_failed(store, session, result, before, "orphaned_tool_result")


def test_a_tool_result_whose_call_was_never_in_the_transcript_may_be_kept_alone(
    store: TranscriptStore, session: str
) -> None:
    stored = store.append(
        session, [tool_result("call_from_before"), {"role": "user", "content": "thanks"}]
    )
    assert store.compact(session, lambda messages: [summary(), stored[0]]).committed


def test_every_call_of_an_assistant_message_is_checked(
    store: TranscriptStore, session: str, observe, check_failed
) -> None:
    two_calls = {
        "role": "assistant",
        "content": None,
        "tool_calls": [tool_call("call_a")["tool_calls"][0], tool_call("call_b")["tool_calls"][0]],
    }
    stored = store.append(session, [two_calls, tool_result("call_a"), tool_result("call_b")])
    before = observe(store, session)
    result = store.compact(session, lambda messages: [summary(), stored[2]])
    check_failed(store, session, result, before, "orphaned_tool_result")
