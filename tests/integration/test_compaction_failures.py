"""Replacements that must not commit (invalid_replacement) and fencing (conflict): each is
recorded as a failed attempt, hands back the stored active list and changes nothing."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable

import pytest

from support.messages import ids, summary
from transcripts import TranscriptStore

# Each case builds a replacement from the snapshot's stored messages and the late ones,
# appended after the attempt began.
Replacement = Callable[[list[dict], list[dict]], object]
INVALID: dict[str, Replacement] = {
    "a new id given twice": lambda stored, late: [
        {"id": "new", **summary()},
        {"id": "new", "role": "user", "content": "x"},
    ],
    "an edited kept message": lambda stored, late: [summary(), {**stored[2], "content": "edited"}],
    "a kept message with a key added": lambda stored, late: [{**stored[2], "name": "bob"}],
    "a kept message with a key removed": lambda stored, late: [
        {"id": stored[2]["id"], "role": stored[2]["role"]}
    ],
    "the id of a message appended after the attempt began": lambda stored, late: [
        summary(),
        late[0],
    ],
    "an item without a role": lambda stored, late: [summary(), {"content": "no role"}],
    "an item with an unknown role": lambda stored, late: [{"role": "narrator", "content": "x"}],
    "an item that is text": lambda stored, late: [summary(), "just a string"],
    "an item that is None": lambda stored, late: [None],
    "an item holding NaN": lambda stored, late: [{"role": "system", "content": float("nan")}],
    "an item holding a set": lambda stored, late: [{"role": "system", "content": {"a"}}],
    "a replacement that is a string": lambda stored, late: "the summary",
    "a replacement that is one message": lambda stored, late: summary(),
    "a replacement that is None": lambda stored, late: None,
}


@pytest.mark.parametrize("build", INVALID.values(), ids=INVALID.keys())
def test_an_invalid_replacement_fails_with_invalid_replacement_and_changes_nothing(
    store: TranscriptStore, session: str, turns, observe, check_failed, build: Replacement
) -> None:
    stored = store.append(session, turns(3))
    attempt = store.begin_compaction(session)
    late = store.append(session, turns(2, prefix="late"))
    before = observe(store, session)
    result = store.commit_compaction(attempt, build(stored, late), reason="test")
    entry = check_failed(store, session, result, before, "invalid_replacement")
    assert result.messages == [*stored, *late]
    # What an invalid replacement "would have superseded": snapshot ids, at least every one
    # the replacement does not even mention.
    mentioned = {item.get("id") for item in build(stored, late) or [] if isinstance(item, dict)}
    assert set(ids(stored)) - mentioned <= set(entry["superseded"]) <= set(ids(stored))
    assert entry["reason"] == "test"
    assert entry["based_on_version"] == attempt.version


def test_a_summarize_returning_an_invalid_replacement_fails_with_invalid_replacement(
    store: TranscriptStore, session: str, turns, observe, check_failed
) -> None:
    store.append(session, turns(3))
    before = observe(store, session)
    result = store.compact(session, lambda messages: [{**messages[0], "content": "rewritten"}])
    check_failed(store, session, result, before, "invalid_replacement")


def test_keeping_a_message_an_earlier_compaction_superseded_fails_with_invalid_replacement(
    store: TranscriptStore, session: str, turns, observe, check_failed
) -> None:
    stored = store.append(session, turns(3))
    assert store.compact(session, lambda messages: [summary()]).committed
    before = observe(store, session)
    result = store.compact(session, lambda messages: [*messages, stored[0]])
    check_failed(store, session, result, before, "invalid_replacement")


def test_a_failed_attempt_may_be_followed_by_a_committed_one(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(3))
    assert not store.compact(session, lambda messages: ["not a message"]).committed
    result = store.compact(session, lambda messages: [summary()])
    assert result.committed
    assert [entry["status"] for entry in store.compactions(session)] == ["failed", "committed"]


def test_a_commit_whose_reason_cannot_be_stored_leaves_the_session_working(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(3))
    attempt = store.begin_compaction(session)
    try:
        store.commit_compaction(attempt, [summary()], reason="undecodable \udc80 reason")
    except Exception:
        pass  # refusing the reason or recording a failure are both fine; corrupting the
        # session is not
    if not any(entry["status"] == "committed" for entry in store.compactions(session)):
        assert store.active(session) == stored
    assert store.compact(session, lambda messages: [summary("next")]).committed


# -- fencing -------------------------------------------------------------------------------


def test_of_two_attempts_begun_at_the_same_version_the_second_to_commit_fails_with_conflict(
    store: TranscriptStore, session: str, turns, observe, check_failed
) -> None:
    stored = store.append(session, turns(4))
    first, second = store.begin_compaction(session), store.begin_compaction(session)
    assert first.version == second.version
    won = store.commit_compaction(first, [summary("first")])
    assert won.committed
    before = observe(store, session)
    lost = store.commit_compaction(second, [summary("second")])
    entry = check_failed(store, session, lost, before, "conflict")
    assert lost.messages == won.messages
    assert entry["superseded"] == ids(stored)
    assert entry["based_on_version"] == second.version


def test_a_conflict_audit_lists_only_the_ids_the_losing_replacement_would_have_superseded(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(4))
    first, second = store.begin_compaction(session), store.begin_compaction(session)
    store.commit_compaction(first, [summary("first"), stored[3]])
    lost = store.commit_compaction(second, [summary("second"), stored[3]])
    assert lost.failure == "conflict"
    assert store.compactions(session)[-1]["superseded"] == ids(stored[:3])


def test_an_attempt_begun_after_a_commit_may_commit(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(4))
    first, second = store.begin_compaction(session), store.begin_compaction(session)
    store.commit_compaction(first, [summary("first")])
    assert store.commit_compaction(second, [summary("second")]).failure == "conflict"
    retry = store.begin_compaction(session)
    assert store.commit_compaction(retry, [*retry.messages, summary("second")]).committed


def test_a_failed_attempt_does_not_fence_an_attempt_begun_before_it(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(4))
    slow, quick = store.begin_compaction(session), store.begin_compaction(session)
    assert not store.fail_compaction(quick, "gave up").committed
    assert store.commit_compaction(slow, [summary()]).committed


def test_an_attempt_survives_appends_made_after_it_began(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(4))
    attempt = store.begin_compaction(session)
    for i in range(3):
        store.append(session, [{"role": "user", "content": f"late {i}"}])
    assert store.commit_compaction(attempt, [summary()]).committed


def test_a_compaction_committed_by_another_store_on_the_same_file_fences_an_older_attempt(
    sqlite_url: str, turns
) -> None:
    with TranscriptStore.open(sqlite_url) as first:
        first.start("s")
        first.append("s", turns(4))
        stale = first.begin_compaction("s")
        with TranscriptStore.open(sqlite_url) as second:
            assert second.compact("s", lambda messages: [summary("won")]).committed
        assert first.commit_compaction(stale, [summary("lost")]).failure == "conflict"


def test_two_compactions_racing_in_threads_exactly_one_commits(
    store: TranscriptStore, session: str, turns
) -> None:
    store.append(session, turns(6))
    both_began = threading.Barrier(2, timeout=10)
    results = []

    def racer(name: str) -> None:
        def summarize(messages: list[dict]) -> list[dict]:
            both_began.wait()  # each has its snapshot before either commits
            return [summary(name)]

        results.append(store.compact(session, summarize))

    threads = [threading.Thread(target=racer, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(result.committed for result in results) == [False, True]
    [winner] = [result for result in results if result.committed]
    [loser] = [result for result in results if not result.committed]
    assert loser.failure == "conflict"
    assert loser.messages == winner.messages == store.active(session)
    assert sorted(entry["status"] for entry in store.compactions(session)) == [
        "committed",
        "failed",
    ]


def _race_in_a_process(url: str, barrier, outcomes, name: str) -> None:
    with TranscriptStore.open(url) as store:
        attempt = store.begin_compaction("s")
        barrier.wait()
        result = store.commit_compaction(attempt, [summary(name)])
        outcomes.put((name, result.committed, result.failure))


@pytest.mark.slow
def test_compactions_racing_in_separate_processes_exactly_one_commits_the_others_are_conflicts(
    sqlite_url: str, turns
) -> None:
    racers = 3
    with TranscriptStore.open(sqlite_url) as store:
        store.start("s")
        store.append("s", turns(6))
    context = multiprocessing.get_context("fork")
    barrier, outcomes = context.Barrier(racers, timeout=30), context.Queue()
    processes = [
        context.Process(target=_race_in_a_process, args=(sqlite_url, barrier, outcomes, f"p{i}"))
        for i in range(racers)
    ]
    for process in processes:
        process.start()
    results = [outcomes.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(timeout=30)
        assert process.exitcode == 0
    assert sorted(committed for _, committed, _ in results) == [False] * (racers - 1) + [True]
    assert {failure for _, committed, failure in results if not committed} == {"conflict"}
    [winner] = [name for name, committed, _ in results if committed]
    with TranscriptStore.open(sqlite_url) as store:
        assert store.active("s")[0]["content"] == winner
        statuses = [entry["status"] for entry in store.compactions("s")]
    assert sorted(statuses) == ["committed"] + ["failed"] * (racers - 1)
