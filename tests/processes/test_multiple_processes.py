"""Several real processes writing one store at once: a SQLite file, and PostgreSQL when
$TRANSCRIPTS_TEST_POSTGRES_URL names a server.

The child programs live in support/programs/workers.py and run as scripts with this
interpreter (see support/processes.py for how the parent drives them).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from contextlib import closing
from pathlib import Path

import pytest

from support.backends import DURABLE_BACKENDS
from support.messages import turns, without_id
from support.processes import Spawn, program, release_together
from support.rows import path_of
from transcripts import StorageError, TranscriptStore

pytestmark = pytest.mark.slow

PROCESSES = 4
PER_WORKER = 50
ANONYMOUS, OWN_IDS, SHARED = 20, 15, 15  # as in workers.py


@pytest.fixture(params=DURABLE_BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backends several processes can share: a SQLite file and PostgreSQL."""
    return request.param


def worker_program(*args: str) -> list[str]:
    """The command running a program of workers.py: worker_program("append", url, …)."""
    return program("workers.py", *args)


# -- appends --------------------------------------------------------------------------------


def test_four_processes_appending_to_one_session_store_every_message_exactly_once(
    store_url: str, spawn: Spawn
) -> None:
    # The parent creates the file and its tables; the session itself is started by the
    # workers, racing each other (start with the same arguments is a no-op).
    TranscriptStore.open(store_url).close()
    workers = [
        spawn(
            f"appender-{i}", worker_program("append", store_url, "shared-session", str(i), "shared")
        )
        for i in range(PROCESSES)
    ]
    release_together(workers, "ready")
    results = [worker.result() for worker in workers]

    # Every worker got back each message it sent, as stored, in order, with an id.
    sent_by_id: dict[str, dict] = {}
    for result in results:
        assert len(result["sent"]) == len(result["stored"]) == PER_WORKER
        for sent, stored in zip(result["sent"], result["stored"], strict=True):
            assert without_id(stored) == without_id(sent)
            if "id" in sent:
                assert stored["id"] == sent["id"]
            assert sent_by_id.setdefault(stored["id"], without_id(sent)) == without_id(sent)
    anonymous_ids = [
        stored["id"]
        for result in results
        for sent, stored in zip(result["sent"], result["stored"], strict=True)
        if "id" not in sent
    ]
    assert len(anonymous_ids) == len(set(anonymous_ids)) == PROCESSES * ANONYMOUS
    expected_total = PROCESSES * (ANONYMOUS + OWN_IDS) + SHARED
    assert len(sent_by_id) == expected_total

    with TranscriptStore.open(store_url) as store:
        history = store.history("shared-session")
        ids = [entry["id"] for entry in history]
        assert len(ids) == len(set(ids)) == expected_total  # no id twice
        assert set(ids) == set(sent_by_id)
        assert all(entry["active"] for entry in history)
        for entry in history:
            assert without_id(entry["message"]) == sent_by_id[entry["id"]]
        assert [message["id"] for message in store.active("shared-session")] == ids

        # Each worker's own messages (not the shared ones) keep the order it appended them in.
        position = {message_id: n for n, message_id in enumerate(ids)}
        for result in results:
            own = [
                stored["id"]
                for stored in result["stored"]
                if not stored["id"].startswith("shared-")
            ]
            assert len(own) == ANONYMOUS + OWN_IDS
            assert [position[i] for i in own] == sorted(position[i] for i in own)

        types = Counter(event["type"] for event in store.events("shared-session"))
        assert types == {"Started": 1, "MessageAppended": expected_total}
        [summary] = store.sessions()
        assert (summary["id"], summary["source"]) == ("shared-session", "e2e")
        assert (summary["messages"], summary["active"]) == (expected_total, expected_total)
        assert store.verify_projections().ok


def test_four_processes_appending_to_different_sessions_store_everything(
    store_url: str, spawn: Spawn
) -> None:
    TranscriptStore.open(store_url).close()
    # The same "shared" ids in every session: ids are unique per transcript, not globally.
    workers = [
        spawn(
            f"appender-{i}", worker_program("append", store_url, f"session-{i}", str(i), "shared")
        )
        for i in range(PROCESSES)
    ]
    release_together(workers, "ready")
    results = [worker.result() for worker in workers]

    per_session = ANONYMOUS + OWN_IDS + SHARED
    with TranscriptStore.open(store_url) as store:
        for i, result in enumerate(results):
            session_id = f"session-{i}"
            assert len(result["stored"]) == PER_WORKER
            history = store.history(session_id)
            stored_ids = [message["id"] for message in result["stored"]]
            assert [entry["id"] for entry in history] == stored_ids  # all of it, in order
            assert len(set(stored_ids)) == per_session == PER_WORKER
            for entry, sent in zip(history, result["sent"], strict=True):
                assert without_id(entry["message"]) == without_id(sent)
            assert store.active(session_id) == result["stored"]
            types = Counter(event["type"] for event in store.events(session_id))
            assert types == {"Started": 1, "MessageAppended": per_session}
        summaries = {summary["id"]: summary for summary in store.sessions()}
        assert set(summaries) == {f"session-{i}" for i in range(PROCESSES)}
        for summary in summaries.values():
            assert (summary["messages"], summary["active"]) == (per_session, per_session)


def test_a_process_sees_in_sessions_the_messages_other_processes_appended(
    store_url: str, spawn: Spawn
) -> None:
    with TranscriptStore.open(store_url) as store:
        store.start("shared-session", source="e2e")
        store.append("shared-session", [{"id": "first", "role": "user", "content": "hello"}])
        workers = [
            spawn(
                f"appender-{i}",
                worker_program("append", store_url, "shared-session", str(i), "shared"),
            )
            for i in range(2)
        ]
        release_together(workers, "ready")
        for worker in workers:
            worker.result()

        expected = 1 + 2 * (ANONYMOUS + OWN_IDS) + SHARED
        assert len(store.history("shared-session")) == expected
        [summary] = store.sessions()
        assert (summary["messages"], summary["active"]) == (expected, expected)


# The race window on opening is narrow: many short rounds make a lost race show up in
# almost every run (a few seconds); once opening is safe, the test passes every time.
FRESH_ROUNDS = {"in_an_existing_directory": 60, "in_a_new_directory": 20}


@pytest.mark.parametrize("where", list(FRESH_ROUNDS))
def test_four_processes_opening_a_store_file_nobody_created_yet_all_succeed(
    tmp_path: Path, spawn: Spawn, where: str
) -> None:
    # Each round, four processes open the same new file at one signal and write to it.
    rounds = FRESH_ROUNDS[where]
    if where == "in_an_existing_directory":
        template = f"sqlite:///{tmp_path}/store-{{round}}.db"
    else:
        template = f"sqlite:///{tmp_path}/round-{{round}}/data/store.db"
    workers = [
        spawn(f"opener-{i}", worker_program("open-fresh", template, str(i), str(rounds)))
        for i in range(PROCESSES)
    ]
    for _ in range(rounds):
        release_together(workers, "ready")
    results = [worker.result() for worker in workers]

    for round_ in range(rounds):
        url = template.format(round=round_)
        assert all(result["urls"][round_] == url for result in results)
        with TranscriptStore.open(url) as store:
            started = sorted(summary["id"] for summary in store.sessions())
            assert started == [f"session-{i}" for i in range(PROCESSES)]
            for i in range(PROCESSES):
                [message] = store.active(f"session-{i}")
                assert without_id(message) == {"role": "user", "content": f"round {round_}"}


REOPEN_ROUNDS = 40


def test_processes_opening_and_closing_stores_beside_one_they_keep_open_leave_the_file_whole(
    tmp_path: Path, spawn: Spawn
) -> None:
    # Closing any descriptor of a database file drops every POSIX lock its process holds on
    # it, SQLite's: opening a store must never open and close the file itself.
    url = f"sqlite:///{tmp_path}/store.db"
    TranscriptStore.open(url).close()
    workers = [
        spawn(f"reopener-{i}", worker_program("reopen", url, f"session-{i}", str(REOPEN_ROUNDS)))
        for i in range(PROCESSES)
    ]
    release_together(workers, "ready")
    results = [worker.result() for worker in workers]

    with closing(sqlite3.connect(path_of(url))) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with TranscriptStore.open(url) as store:
        for i, result in enumerate(results):
            assert len(result["ids"]) == 2 * REOPEN_ROUNDS
            assert [m["id"] for m in store.history(f"session-{i}")] == result["ids"]
        report = store.verify_projections()
        assert report.ok, [str(problem) for problem in report.problems]


# -- compactions ----------------------------------------------------------------------------


def test_racing_compactions_from_four_processes_commit_one_and_record_the_others_as_conflicts(
    store_url: str, spawn: Spawn
) -> None:
    with TranscriptStore.open(store_url) as store:
        store.start("race", source="e2e")
        seeded = store.append("race", turns(8))
        seeded_version = len(store.events("race"))
    seeded_ids = [message["id"] for message in seeded]

    workers = [
        spawn(f"compactor-{i}", worker_program("compact", store_url, "race", str(i)))
        for i in range(PROCESSES)
    ]
    begun = [json.loads(report) for report in release_together(workers, "begun")]
    # Every attempt began before any committed: all against the same version and snapshot.
    assert {report["version"] for report in begun} == {seeded_version}
    assert all(report["snapshot"] == seeded_ids for report in begun)
    results = [worker.result() for worker in workers]

    winners = [result for result in results if result["committed"]]
    losers = [result for result in results if not result["committed"]]
    assert len(winners) == 1, [(r["committed"], r["failure"], r["error"]) for r in results]
    [winner] = winners
    assert [loser["failure"] for loser in losers] == ["conflict"] * (PROCESSES - 1)
    assert all(loser["error"] for loser in losers)
    assert winner["failure"] is None and winner["error"] is None
    assert [without_id(m) for m in winner["messages"]] == [winner["summary"]]
    for loser in losers:
        assert loser["messages"] == winner["messages"]  # the list a loser must adopt

    with TranscriptStore.open(store_url) as store:
        assert store.active("race") == winner["messages"]
        audit = store.compactions("race")
        assert len(audit) == PROCESSES
        assert {entry["id"] for entry in audit} == {report["id"] for report in begun}
        assert audit[0]["id"] == winner["attempt"]  # the winner saved first
        by_id = {entry["id"]: entry for entry in audit}
        won = by_id[winner["attempt"]]
        assert won["status"] == "committed" and won["failure"] is None
        assert won["superseded"] == seeded_ids
        assert won["added"] == [message["id"] for message in winner["messages"]]
        assert won["reason"] == winner["reason"]
        for loser in losers:
            entry = by_id[loser["attempt"]]
            assert entry["status"] == "failed"
            assert entry["failure"] == "conflict"
            assert entry["error"] == loser["error"]
            assert entry["superseded"] == seeded_ids  # what it would have superseded
            assert entry["added"] == []
            assert entry["based_on_version"] == seeded_version
            assert entry["reason"] == loser["reason"]
        history = store.history("race")
        assert [entry["id"] for entry in history] == [*seeded_ids, *won["added"]]
        assert all(entry["superseded_by"] == winner["attempt"] for entry in history[:8])
        [summary] = store.sessions()
        counts = (summary["compactions_committed"], summary["compactions_failed"])
        assert counts == (1, PROCESSES - 1)
        assert store.verify_projections().ok


# -- fair writers --------------------------------------------------------------------------

COLD_APPENDS = 10
COLD_LOCK_TIMEOUT = 5.0
HOT_WARMUP = "1000"  # appends of history before the cold writers start


def test_a_process_appending_in_a_tight_loop_does_not_starve_another_appending_to_its_session(
    store_url: str, spawn: Spawn
) -> None:
    TranscriptStore.open(store_url).close()
    hot = spawn("hot-writer", worker_program("append-loop", store_url, "shared", HOT_WARMUP))
    hot.expect("ready")
    # Each cold append comes from a store that has not read the session yet (as a process's
    # first write does). A starved one waits the whole lock timeout, then raises StorageError.
    for n in range(COLD_APPENDS):
        with TranscriptStore.open(store_url, lock_timeout=COLD_LOCK_TIMEOUT) as cold:
            cold.append("shared", [{"id": f"cold-{n}", "role": "user", "content": f"cold {n}"}])
    hot.send("stop")
    hot_calls = hot.result()["calls"]
    with TranscriptStore.open(store_url) as store:
        ids = [entry["id"] for entry in store.history("shared")]

    cold_at = [n for n, message_id in enumerate(ids) if message_id.startswith("cold-")]
    assert [ids[n] for n in cold_at] == [f"cold-{n}" for n in range(COLD_APPENDS)]
    assert len(ids) == len(set(ids)) == COLD_APPENDS + hot_calls
    hot_between = cold_at[-1] - cold_at[0] + 1 - COLD_APPENDS
    assert hot_between >= COLD_APPENDS  # the hot writer kept appending all along


# -- the lock -------------------------------------------------------------------------------

HOLD = 1.0
LOCK_TIMEOUT = 5.0


@pytest.mark.parametrize("write", ["append", "commit_compaction"])
def test_a_writer_waits_for_a_lock_another_process_holds_for_less_than_the_lock_timeout(
    sqlite_url: str, spawn: Spawn, write: str
) -> None:
    with TranscriptStore.open(sqlite_url, lock_timeout=LOCK_TIMEOUT) as store:
        store.start("locked", source="e2e")
        store.append("locked", [{"id": "a", "role": "user", "content": "before the lock"}])
        attempt = store.begin_compaction("locked") if write == "commit_compaction" else None

        holder = spawn(
            "lock-holder", worker_program("hold-lock", str(path_of(sqlite_url)), str(HOLD))
        )
        holder.expect("locked")
        began = time.monotonic()
        if write == "append":
            stored = store.append("locked", [{"id": "b", "role": "user", "content": "during"}])
            assert [message["id"] for message in stored] == ["b"]
            expected = ["a", "b"]
        else:
            assert attempt is not None
            result = store.commit_compaction(attempt, [{"role": "system", "content": "summary"}])
            assert (result.committed, result.failure, result.error) == (True, None, None)
            expected = [message["id"] for message in result.messages]
            assert len(expected) == 1 and expected != ["a"]
        waited = time.monotonic() - began
        held = holder.result()["held"]

        assert held >= HOLD
        assert HOLD / 2 <= waited < LOCK_TIMEOUT  # it did wait for the lock, then succeeded
        assert [message["id"] for message in store.active("locked")] == expected
        statuses = [entry["status"] for entry in store.compactions("locked")]
        assert statuses == ([] if write == "append" else ["committed"])


def test_a_writer_gives_up_with_a_storage_error_when_the_lock_is_held_past_the_timeout(
    sqlite_url: str, spawn: Spawn
) -> None:
    with TranscriptStore.open(sqlite_url, lock_timeout=1) as store:
        store.start("locked", source="e2e")
        holder = spawn("lock-holder", worker_program("hold-lock", str(path_of(sqlite_url)), "3"))
        holder.expect("locked")
        began = time.monotonic()
        with pytest.raises(StorageError, match="within 1 s"):
            store.append("locked", [{"id": "late", "role": "user", "content": "too late"}])
        waited = time.monotonic() - began
        assert 0.5 <= waited < 2.9  # gave up after about the timeout, while the lock was held
        holder.result()
        assert store.history("locked") == []
        assert [event["type"] for event in store.events("locked")] == ["Started"]
