"""A failed compaction keeps what was attempted (`CompactionFailed` version 2): the new messages
of a refused replacement (`proposed`), the summarizer's exception with its traceback
(`exception`, bounded), token counts from `compact(count_tokens=…)`; `compaction()` reads
one attempt whole; events of version 1 read as ones that kept neither."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support.messages import summary, tool_call, tool_result
from transcripts import CompactionNotFoundError, SessionNotFoundError, TranscriptStore
from transcripts.domain.attempted import MAX_EXCEPTION_TEXT

OLD_STORE = Path(__file__).parents[1] / "data" / "stores" / "release_compaction_v1.db"


def characters(messages: list[dict]) -> int:
    """A token counter: the characters of the messages' text."""
    return sum(len(str(message.get("content") or "")) for message in messages)


def failing_summarizer(messages: list[dict]) -> list[dict]:
    raise ConnectionError(f"model unreachable after {len(messages)} messages")


def test_a_summarizer_that_raised_keeps_its_exception_and_proposes_nothing(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(4))
    result = store.compact(session, failing_summarizer, reason="budget", count_tokens=characters)
    assert (result.committed, result.failure) == (False, "summarize_error")
    attempt = store.compaction(session, result.compaction_id)
    assert attempt["proposed"] is None
    exception = attempt["exception"]
    assert exception["type"] == "ConnectionError"
    assert exception["message"] == "model unreachable after 4 messages"
    assert exception["traceback"].startswith("Traceback (most recent call last):")
    assert "in failing_summarizer" in exception["traceback"]
    assert exception["traceback"].endswith("ConnectionError: model unreachable after 4 messages\n")
    assert (attempt["tokens_before"], attempt["tokens_after"]) == (characters(turns(4)), None)
    assert attempt["session_id"] == session and attempt["status"] == "failed"


def test_an_exception_traceback_and_message_are_bounded(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(2))

    def deep(messages: list[dict], depth: int = 0) -> list[dict]:
        if depth < 400:
            return deep(messages, depth + 1)
        raise RuntimeError("x" * 50_000)

    result = store.compact(session, deep)
    exception = store.compaction(session, result.compaction_id)["exception"]
    assert len(exception["message"]) == MAX_EXCEPTION_TEXT
    traceback = exception["traceback"]
    assert len(traceback) <= MAX_EXCEPTION_TEXT
    assert traceback.startswith("Traceback (most recent call last):")  # its start and end kept
    assert " characters cut) …\n" in traceback and traceback.endswith("xxx\n")


def test_a_refused_replacement_keeps_its_new_messages_conflict(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(3))
    first, second = store.begin_compaction(session), store.begin_compaction(session)
    assert store.commit_compaction(first, [summary("won")]).committed
    lost = store.commit_compaction(second, [stored[0], summary("lost")])
    assert lost.failure == "conflict"
    assert store.compaction(session, lost.compaction_id)["proposed"] == [summary("lost")]


def test_a_refused_replacement_keeps_its_new_messages_invalid(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(3))
    attempt = store.begin_compaction(session)
    replacement = [summary("fine"), {"role": "narrator", "content": "x"}, "text", {"c": {1}}]
    result = store.commit_compaction(attempt, replacement)
    assert result.failure == "invalid_replacement"
    assert store.compaction(session, result.compaction_id)["proposed"] == [
        summary("fine"),
        {"role": "narrator", "content": "x"},
        {"unreadable": "'text'"},
        {"unreadable": "{'c': {1}}"},
    ]


def test_a_refused_replacement_keeps_its_new_messages_orphaned_tool_result(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, [*turns(2), tool_call("c1")])
    attempt = store.begin_compaction(session)
    store.append(session, [tool_result("c1")])
    result = store.commit_compaction(attempt, [summary("orphans the result")])
    assert result.failure == "orphaned_tool_result"
    assert store.compaction(session, result.compaction_id)["proposed"] == [
        summary("orphans the result")
    ]


def test_count_tokens_fills_the_counts_of_a_commit(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(4))
    result = store.compact(session, lambda ms: [summary("short")], count_tokens=characters)
    attempt = store.compaction(session, result.compaction_id)
    assert (attempt["tokens_before"], attempt["tokens_after"]) == (characters(stored), 5)
    assert [without(m) for m in attempt["proposed"]] == [summary("short")]
    assert attempt["exception"] is None


def without(message: dict) -> dict:
    return {key: value for key, value in message.items() if key != "id"}


def counting_the_snapshot_only(messages: list[dict]) -> int:
    if any(message["content"] == "summary" for message in messages):
        raise OverflowError("cannot count a summary")
    return len(messages)


@pytest.mark.parametrize("answer", [-1, 2.5, "3", True])
def test_a_count_tokens_answering_no_count_is_a_recorded_failure(
    store: TranscriptStore, session: str, turns, answer: object
) -> None:
    stored = store.append(session, turns(2))
    result = store.compact(session, lambda ms: [summary()], count_tokens=lambda ms: answer)
    assert (result.committed, result.failure) == (False, "count_tokens_error")
    assert result.messages == stored
    assert store.compaction(session, result.compaction_id)["exception"]["type"] == (
        "transcripts.domain.errors.TranscriptError"
    )


def test_a_count_tokens_that_raises_is_a_recorded_failure_keeping_the_proposal(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(2))
    summarize = lambda ms: [summary()]  # noqa: E731
    attempt = store.compact(session, summarize, count_tokens=counting_the_snapshot_only)
    assert attempt.failure == "count_tokens_error"
    kept = store.compaction(session, attempt.compaction_id)
    assert (kept["exception"]["type"], kept["tokens_before"]) == ("OverflowError", 2)
    assert kept["proposed"] == [summary()]


def test_an_unknown_attempt_id_is_compaction_not_found(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(2))
    other = store.compact(session, lambda ms: [summary()])
    store.start("other")
    with pytest.raises(CompactionNotFoundError):
        store.compaction(session, "cmp_nope")
    with pytest.raises(CompactionNotFoundError):
        store.compaction("other", other.compaction_id)  # another session's
    with pytest.raises(SessionNotFoundError):
        store.compaction("never", other.compaction_id)


def test_a_version_1_failure_reads_as_one_that_kept_nothing(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copyfile(OLD_STORE, path)
    with TranscriptStore.open(f"sqlite:///{path}") as store:
        [(session, failed)] = [
            (s["id"], a)
            for s in store.sessions()
            if not s["erased_at"]
            for a in store.compactions(s["id"])
            if a["status"] == "failed"
        ]
        attempt = store.compaction(session, failed["id"])
        assert (attempt["proposed"], attempt["exception"]) == (None, None)
        assert attempt["error"] == "ZeroDivisionError: division by zero"
        [event] = [e for e in store.events(session) if e["type"] == "CompactionFailed"]
        assert (event["data"]["proposed"], event["data"]["exception"]) == (None, None)
        assert store.verify_projections().ok


def test_fail_compaction_keeps_a_proposal_but_not_what_a_raising_summarizer_would_keep(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(3))
    attempt = store.begin_compaction(session)
    raised = store.fail_compaction(
        attempt, TimeoutError("slow"), replacement=stored[2:], tokens_before=30
    )
    kept = store.compaction(session, raised.compaction_id)
    assert (kept["proposed"], kept["exception"]["type"], kept["tokens_before"]) == (
        None,
        "TimeoutError",
        30,
    )
    assert kept["superseded"] == [stored[0]["id"], stored[1]["id"]]
    attempt = store.begin_compaction(session)
    refused = store.fail_compaction(
        attempt, "the caller refused it", failure="refused", replacement=[summary("s")]
    )
    kept = store.compaction(session, refused.compaction_id)
    assert (kept["proposed"], kept["exception"]) == ([summary("s")], None)


class Unreadable(list):
    """A replacement whose items cannot even be listed."""

    def __iter__(self):  # type: ignore[override]
        raise RuntimeError("cannot iterate")


def test_a_replacement_that_cannot_even_be_read_is_kept_as_its_repr_and_compact_returns(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(2))
    result = store.compact(session, lambda ms: Unreadable([1]))
    assert (result.committed, result.failure, result.messages) == (
        False,
        "invalid_replacement",
        stored,
    )
    attempt = store.compaction(session, result.compaction_id)
    assert attempt["proposed"] == [{"unreadable": "[1]"}]
    assert attempt["superseded"] == [message["id"] for message in stored]
