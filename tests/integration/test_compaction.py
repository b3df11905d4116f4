"""Compaction: the motivating incident, kept and new messages, the audit, appends made
meanwhile, and failures that are recorded and change nothing."""

from __future__ import annotations

from datetime import datetime

import pytest

from support.messages import ids, summary
from transcripts import CompactionAttempt, CompactionResult, TranscriptError, TranscriptStore


def database_is_locked(messages: list[dict]) -> list[dict]:
    raise RuntimeError("database is locked")


# -- the motivating incident: 8 seeded + 8 synced, a failing then a committed compaction --


@pytest.fixture
def sixteen(store: TranscriptStore, session: str, turns) -> list[dict]:
    """8 seeded messages and 8 synced by the agent's flush: 16 active."""
    store.append(session, turns(8, prefix="seed"))
    live = store.sync(session, [*store.active(session), *turns(8, prefix="live")])
    assert len(live) == 16
    return live


def test_a_failed_compaction_hands_back_the_same_messages_with_the_same_ids(
    store: TranscriptStore, session: str, sixteen: list[dict], observe, check_failed
) -> None:
    before = observe(store, session)
    result = store.compact(session, database_is_locked, reason="context window full")
    entry = check_failed(store, session, result, before, "summarize_error")
    assert result.messages == sixteen
    assert "database is locked" in result.error
    assert entry["superseded"] == ids(sixteen)
    assert entry["reason"] == "context window full"


def test_syncing_the_list_a_failed_compaction_handed_back_stores_nothing_even_twice(
    store: TranscriptStore, session: str, sixteen: list[dict]
) -> None:
    handed_back = store.compact(session, database_is_locked).messages
    events = store.events(session)
    assert store.sync(session, handed_back) == sixteen
    assert store.sync(session, handed_back) == sixteen
    assert store.events(session) == events
    assert len(store.history(session)) == 16


def test_a_successful_compaction_of_8_messages_into_4_fresh_ones_leaves_4_active_and_12_in_history(
    store: TranscriptStore, session: str, turns
) -> None:
    eight = store.append(session, turns(8))
    fresh = [summary(f"summary part {i}") for i in range(4)]
    result = store.compact(session, lambda messages: fresh)
    assert result.committed
    active = store.active(session)
    assert result.messages == active
    assert [{k: v for k, v in m.items() if k != "id"} for m in active] == fresh
    assert not set(ids(active)) & set(ids(eight))
    history = store.history(session)
    assert len(history) == 12
    assert [entry["id"] for entry in history if not entry["active"]] == ids(eight)


def test_after_a_failed_then_a_committed_compaction_flushing_every_old_list_stores_nothing(
    store: TranscriptStore, session: str, sixteen: list[dict]
) -> None:
    handed_back = store.compact(session, database_is_locked).messages
    compacted = store.compact(
        session, lambda messages: [summary(f"part {i}") for i in range(4)]
    ).messages
    events = store.events(session)
    for stale in (sixteen, handed_back, [*handed_back, *compacted]):
        assert store.sync(session, stale) == compacted
    assert store.events(session) == events
    assert len(store.active(session)) == 4
    assert len(store.history(session)) == 20


# -- what a committed compaction does ----------------------------------------------------


def test_begin_compaction_snapshots_the_active_list_at_the_current_version(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(3))
    attempt = store.begin_compaction(session)
    assert isinstance(attempt, CompactionAttempt)
    assert attempt.session_id == session
    assert attempt.messages == stored
    assert attempt.version == store.events(session)[-1]["version"]
    assert isinstance(attempt.id, str) and attempt.id
    assert store.begin_compaction(session).id != attempt.id


def test_compact_calls_summarize_once_with_the_active_snapshot_each_message_with_its_id(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(5))
    calls: list[list[dict]] = []

    def summarize(messages: list[dict]) -> list[dict]:
        calls.append([dict(message) for message in messages])
        return [summary()]

    store.compact(session, summarize)
    assert calls == [stored]


def test_a_summarize_that_mutates_the_messages_it_is_given_changes_nothing_stored(
    store: TranscriptStore, session: str
) -> None:
    stored = store.append(
        session, [{"role": "user", "content": [{"type": "text", "text": "original"}]}]
    )

    def vandal(messages: list[dict]) -> list[dict]:
        messages[0]["content"][0]["text"] = "vandalised"
        messages[0]["role"] = "assistant"
        messages.clear()
        raise RuntimeError("gave up")

    assert store.compact(session, vandal).messages == stored
    assert store.active(session) == stored
    assert store.history(session)[0]["message"] == stored[0]


def test_replacement_items_with_a_snapshot_id_are_kept_and_items_without_one_are_new(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(6))
    replacement = [summary("first half"), stored[3], summary("second half"), stored[5]]
    result = store.compact(session, lambda messages: replacement)
    assert result.committed
    active = store.active(session)
    assert result.messages == active
    assert [active[1], active[3]] == [stored[3], stored[5]]
    assert [active[0]["content"], active[2]["content"]] == ["first half", "second half"]
    new_ids = {active[0]["id"], active[2]["id"]}
    assert len(new_ids) == 2 and not new_ids & set(ids(stored))


def test_history_keeps_every_message_marking_what_each_compaction_superseded_and_added(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(4))
    first = store.compact(session, lambda messages: [summary("one"), messages[-1]])
    second = store.compact(session, lambda messages: [summary("two")])
    summary_one, summary_two = first.messages[0], second.messages[0]
    history = {entry["id"]: entry for entry in store.history(session)}
    assert list(history) == [*ids(stored), summary_one["id"], summary_two["id"]]
    for message in stored[:3]:
        assert history[message["id"]] == {
            "id": message["id"],
            "active": False,
            "superseded_by": first.compaction_id,
            "added_by": None,
            "rewound": False,
            "message": message,
        }
    assert history[stored[3]["id"]]["superseded_by"] == second.compaction_id
    assert history[summary_one["id"]] == {
        "id": summary_one["id"],
        "active": False,
        "superseded_by": second.compaction_id,
        "added_by": first.compaction_id,
        "rewound": False,
        "message": summary_one,
    }
    assert history[summary_two["id"]] == {
        "id": summary_two["id"],
        "active": True,
        "superseded_by": None,
        "added_by": second.compaction_id,
        "rewound": False,
        "message": summary_two,
    }


def test_a_committed_compaction_is_audited_with_what_it_superseded_added_and_cost(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(4))
    attempt = store.begin_compaction(session)
    result = store.commit_compaction(
        attempt, [summary(), stored[3]], reason="too long", tokens_before=1200, tokens_after=300
    )
    assert isinstance(result, CompactionResult)
    assert (result.committed, result.failure, result.error) == (True, None, None)
    [entry] = store.compactions(session)
    new_id = result.messages[0]["id"]
    assert entry["id"] == result.compaction_id == attempt.id
    assert entry["status"] == "committed"
    assert (entry["failure"], entry["error"]) == (None, None)
    assert entry["reason"] == "too long"
    assert entry["superseded"] == ids(stored[:3])
    assert entry["added"] == [new_id]
    assert entry["based_on_version"] == attempt.version
    assert (entry["tokens_before"], entry["tokens_after"]) == (1200, 300)
    assert isinstance(entry["at"], datetime)
    event = store.events(session)[-1]
    assert event["type"] == "CompactionCommitted"
    assert event["data"]["compaction_id"] == attempt.id
    assert event["data"]["based_on_version"] == attempt.version
    assert (event["data"]["replaced"], event["data"]["kept"]) == (4, [stored[3]["id"]])
    assert [(new["id"], new["message"]) for new in event["data"]["added"]] == [(new_id, summary())]


def test_token_counts_and_metadata_are_optional(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(2))
    store.commit_compaction(store.begin_compaction(session), [summary()])
    [entry] = store.compactions(session)
    assert (entry["tokens_before"], entry["tokens_after"], entry["reason"]) == (None, None, "")
    assert entry["metadata"] is None


def test_a_commits_metadata_is_kept_with_it_and_shown_in_the_audit(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(3))
    metadata = {"handler": "summarizing", "model": "m-1", "kept_from": 1, "extra": {"a": [1]}}
    attempt = store.begin_compaction(session)
    store.commit_compaction(attempt, [summary()], metadata=metadata)
    attempt = store.begin_compaction(session)
    store.fail_compaction(attempt, "the summarizer timed out")
    assert [entry["metadata"] for entry in store.compactions(session)] == [metadata, None]
    assert store.events(session)[-2]["data"]["metadata"] == metadata
    store.rebuild_projections()
    assert store.compactions(session)[0]["metadata"] == metadata
    assert store.verify_projections().ok


def test_metadata_that_is_no_json_object_is_refused_before_anything_is_stored(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(2))
    attempt = store.begin_compaction(session)
    for metadata in (["handler"], {"n": float("inf")}, {"when": object()}):
        with pytest.raises(TranscriptError, match="metadata"):
            store.commit_compaction(attempt, [summary()], metadata=metadata)  # type: ignore[arg-type]
    assert store.compactions(session) == []


def test_an_empty_snapshot_may_be_compacted_and_supersedes_nothing(
    store: TranscriptStore, session: str
) -> None:
    result = store.compact(session, lambda messages: [summary("carried over from the parent")])
    assert result.committed
    [entry] = store.compactions(session)
    assert entry["superseded"] == []
    assert entry["added"] == ids(result.messages) == ids(store.active(session))


def test_a_replacement_may_be_empty_and_then_supersedes_the_whole_snapshot(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(3))
    result = store.compact(session, lambda messages: [])
    assert result.committed and result.messages == [] == store.active(session)
    assert store.compactions(session)[0]["superseded"] == ids(stored)


def test_the_replacement_may_reorder_kept_messages(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(3))
    result = store.compact(session, lambda messages: [messages[2], summary(), messages[0]])
    assert result.committed
    assert ids(store.active(session)) == [
        stored[2]["id"],
        result.messages[1]["id"],
        stored[0]["id"],
    ]


# -- appends made while a compaction is under way are never lost ----------------------------


def test_messages_appended_after_the_attempt_began_stay_active_after_the_replacement(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(4))
    attempt = store.begin_compaction(session)
    late = store.append(session, turns(2, prefix="late"))
    result = store.commit_compaction(attempt, [summary()])
    assert result.committed
    assert store.active(session) == result.messages == [result.messages[0], *late]
    assert store.compactions(session)[0]["superseded"] == ids(stored)


def test_messages_appended_while_summarize_runs_are_kept_after_the_summary(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(4))
    meanwhile: list[dict] = []

    def slow_summarize(messages: list[dict]) -> list[dict]:
        meanwhile.extend(store.append(session, turns(3, prefix="meanwhile")))
        return [summary(), messages[-1]]

    result = store.compact(session, slow_summarize)
    assert result.committed
    assert store.active(session)[2:] == meanwhile
    assert all(entry["active"] for entry in store.history(session) if entry["id"] in ids(meanwhile))


# -- summarize errors and fail_compaction --------------------------------------------------


@pytest.mark.parametrize(
    ("error", "fragment"),
    [
        (RuntimeError("database is locked"), "database is locked"),
        (TimeoutError("the model took too long\nsecond line"), "the model took too long"),
        (ValueError("ünïcode ✓ 日本"), "ünïcode ✓ 日本"),
        (KeyError("missing"), "missing"),
        (RuntimeError(), "RuntimeError"),
        (RuntimeError("x" * 20_000), "x" * 20_000),
        (OSError(b"bad \xff bytes".decode("utf-8", "surrogateescape")), "bad "),
    ],
    ids=["locked", "multiline", "unicode", "keyerror", "empty", "long", "undecodable bytes"],
)
def test_a_summarize_error_is_recorded_whatever_the_exception_says(
    store: TranscriptStore,
    session: str,
    turns,
    observe,
    check_failed,
    error: Exception,
    fragment: str,
) -> None:
    stored = store.append(session, turns(3))
    before = observe(store, session)

    def summarize(messages: list[dict]) -> list[dict]:
        raise error

    result = store.compact(session, summarize)
    entry = check_failed(store, session, result, before, "summarize_error")
    assert fragment in result.error
    assert entry["superseded"] == ids(stored)
    # The session goes on working normally afterwards.
    assert store.compact(session, lambda messages: [summary()]).committed


def test_fail_compaction_with_an_exception_records_its_message(
    store: TranscriptStore, session: str, turns, observe, check_failed
) -> None:
    stored = store.append(session, turns(3))
    attempt = store.begin_compaction(session)
    before = observe(store, session)
    result = store.fail_compaction(attempt, ConnectionError("provider returned 529 overloaded"))
    entry = check_failed(store, session, result, before, "summarize_error")
    assert "provider returned 529 overloaded" in result.error
    assert result.compaction_id == attempt.id
    assert entry["superseded"] == ids(stored)
    assert entry["based_on_version"] == attempt.version


def test_fail_compaction_with_text_records_the_text_under_the_given_failure_code(
    store: TranscriptStore, session: str, turns, observe, check_failed
) -> None:
    store.append(session, turns(3))
    attempt = store.begin_compaction(session)
    before = observe(store, session)
    result = store.fail_compaction(
        attempt, "the summary was longer than the input", failure="too_long"
    )
    check_failed(store, session, result, before, "too_long")
    assert result.error == "the summary was longer than the input"


def test_a_failure_hands_back_the_stored_active_list_including_appends_made_meanwhile(
    store: TranscriptStore, session: str, turns, observe, check_failed
) -> None:
    stored = store.append(session, turns(3))
    attempt = store.begin_compaction(session)
    late = store.append(session, turns(2, prefix="late"))
    before = observe(store, session)
    result = store.fail_compaction(attempt, RuntimeError("boom"))
    check_failed(store, session, result, before, "summarize_error")
    assert result.messages == [*stored, *late]


def test_an_attempt_begun_by_another_store_can_be_neither_committed_nor_failed(
    sqlite_url: str, turns
) -> None:
    with TranscriptStore.open(sqlite_url) as mine, TranscriptStore.open(sqlite_url) as other:
        mine.start("s")
        mine.append("s", turns(3))
        attempt = other.begin_compaction("s")
        events = mine.events("s")
        with pytest.raises(TranscriptError):
            mine.commit_compaction(attempt, [summary()])
        with pytest.raises(TranscriptError):
            mine.fail_compaction(attempt, "nope")
        assert mine.events("s") == other.events("s") == events


# -- a write that cannot get the lock ------------------------------------------------------


def test_a_commit_kept_from_the_write_lock_fails_with_storage_error_recorded_once_it_is_free(
    sqlite_url: str, hold_write_lock, turns, observe, check_failed
) -> None:
    with TranscriptStore.open(sqlite_url, lock_timeout=1) as store:
        store.start("s")
        stored = store.append("s", turns(4))
        attempt = store.begin_compaction("s")
        before = observe(store, "s")
        hold_write_lock(1.5)
        result = store.commit_compaction(attempt, [summary(), stored[3]], reason="nightly")
        entry = check_failed(store, "s", result, before, "storage_error")
        assert "database is locked" in result.error
        assert entry["reason"] == "nightly"
        audit = store.compactions("s")
    with TranscriptStore.open(sqlite_url) as reopened:
        assert reopened.compactions("s") == audit
        assert reopened.active("s") == stored
    assert entry["superseded"] == ids(stored[:3])  # what it would have superseded: not the kept one


def test_a_failure_recorded_with_its_replacement_audits_only_what_it_would_have_superseded(
    store: TranscriptStore, session: str, turns, observe, check_failed
) -> None:
    stored = store.append(session, turns(4))
    attempt = store.begin_compaction(session)
    before = observe(store, session)
    result = store.fail_compaction(
        attempt, "the provider timed out", failure="timeout", replacement=[summary(), stored[3]]
    )
    entry = check_failed(store, session, result, before, "timeout")
    assert entry["superseded"] == ids(stored[:3])
