"""One TranscriptStore shared by threads, on every backend: 16 threads append to a session of
their own and to one shared session, compact both and read concurrently for a few seconds.
Nothing acknowledged is lost or duplicated (every acknowledged message id is in the history
exactly once; every history entry is active or superseded by a committed compaction; every
message a committed compaction added is there), every compaction a thread was told about is
in the audit as it was told, no call raises, and the views verify clean, before and after a
rebuild."""

from __future__ import annotations

import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from transcripts import TranscriptStore

THREADS = 16
SECONDS = 8.0  # of work; on 2 shared cores
SHARED = "shared"


@dataclass
class Ledger:
    """What one thread was told."""

    appended: dict[str, list[str]] = field(default_factory=dict)  # session -> message ids
    committed: dict[str, list[str]] = field(default_factory=dict)  # session -> compaction ids
    failed: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # (id, failure)
    errors: list[str] = field(default_factory=list)
    calls: int = 0


def summarize(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the last two messages, replace the rest by one summary."""
    return [{"role": "system", "content": f"summary of {len(messages)}"}, *messages[-2:]]


def worker(store: TranscriptStore, n: int, start: threading.Barrier, deadline: float) -> Ledger:
    ledger = Ledger()
    own = f"own-{n}"
    start.wait()
    i = 0
    while time.monotonic() < deadline:
        i += 1
        try:
            for session in (own, SHARED):
                message_id = f"t{n}-{i}-{session}"
                (stored,) = store.append(
                    session, [{"id": message_id, "role": "user", "content": f"hello {n} {i}"}]
                )
                assert stored["id"] == message_id
                ledger.appended.setdefault(session, []).append(message_id)
                ledger.calls += 1
            if i % 3 == 0:
                live = store.sync(
                    own, [{"id": f"t{n}-{i}-sync", "role": "assistant", "content": "hi"}]
                )
                ledger.appended.setdefault(own, []).append(f"t{n}-{i}-sync")
                assert f"t{n}-{i}-sync" in [m["id"] for m in live]
            if i % 5 == 0:
                for session in (own, SHARED):
                    result = store.compact(session, summarize, reason=f"thread {n}")
                    if result.committed:
                        ledger.committed.setdefault(session, []).append(result.compaction_id)
                    else:
                        ledger.failed.setdefault(session, []).append(
                            (result.compaction_id, result.failure or "")
                        )
                        assert result.failure == "conflict", (result.failure, result.error)
            if i % 2 == 0:
                active = store.active(own)
                assert len({m["id"] for m in active}) == len(active)
                store.history(SHARED)
                store.sessions()
                store.compactions(SHARED)
                store.search("hello", session_id=own, limit=5)
        except Exception:
            ledger.errors.append(traceback.format_exc(limit=6))
            if len(ledger.errors) > 5:
                return ledger
    return ledger


def check_session(store: TranscriptStore, session: str, ledgers: list[Ledger]) -> None:
    history = store.history(session)
    counts = Counter(entry["id"] for entry in history)
    duplicated = [message_id for message_id, count in counts.items() if count > 1]
    assert duplicated == [], f"{session}: stored twice: {duplicated[:5]}"
    acknowledged = [i for ledger in ledgers for i in ledger.appended.get(session, [])]
    missing = [message_id for message_id in acknowledged if message_id not in counts]
    assert missing == [], f"{session}: acknowledged but lost: {missing[:5]}"
    audit = store.compactions(session)
    committed = {entry["id"]: entry for entry in audit if entry["status"] == "committed"}
    failed = {entry["id"]: entry for entry in audit if entry["status"] == "failed"}
    told_committed = [c for ledger in ledgers for c in ledger.committed.get(session, [])]
    told_failed = [f for ledger in ledgers for f in ledger.failed.get(session, [])]
    assert sorted(told_committed) == sorted(committed), session
    assert sorted(c for c, _ in told_failed) == sorted(failed), session
    assert all(failed[c]["failure"] == failure for c, failure in told_failed)
    added = {message_id for entry in committed.values() for message_id in entry["added"]}
    assert set(counts) == set(acknowledged) | added, f"{session}: messages nobody stored"
    active = store.active(session)
    active_ids = [m["id"] for m in active]
    assert len(set(active_ids)) == len(active_ids)
    for entry in history:
        if entry["active"]:
            assert entry["superseded_by"] is None and entry["id"] in active_ids
        else:
            assert entry["superseded_by"] in committed, entry
    assert {e["id"] for e in history if e["active"]} == set(active_ids)
    (summary,) = [s for s in store.sessions() if s["id"] == session]
    assert (summary["messages"], summary["active"], summary["quarantined"]) == (
        len(history),
        len(active),
        0,
    )


def run_threads(store: TranscriptStore, *, rebuild_every: float | None = None) -> None:
    store.start(SHARED)
    for n in range(THREADS):
        store.start(f"own-{n}")
    barrier = threading.Barrier(THREADS)
    deadline = time.monotonic() + SECONDS + 2  # the barrier releases them together
    ledgers: list[Ledger] = [Ledger() for _ in range(THREADS)]

    def run(n: int) -> None:
        ledgers[n] = worker(store, n, barrier, deadline)

    rebuilds: list[str] = []

    def rebuild() -> None:
        while time.monotonic() < deadline:
            time.sleep(rebuild_every or 0)
            try:
                store.rebuild_projections()
            except Exception:
                rebuilds.append(traceback.format_exc(limit=6))
                return

    threads = [threading.Thread(target=run, args=(n,), daemon=True) for n in range(THREADS)]
    if rebuild_every is not None:
        threads.append(threading.Thread(target=rebuild, daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(SECONDS + 240)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"
    assert rebuilds == [], f"a rebuild raised:\n{rebuilds[0]}"
    errors = [error for ledger in ledgers for error in ledger.errors]
    assert errors == [], f"{len(errors)} calls raised; the first:\n{errors[0]}"
    assert all(ledger.calls > 0 for ledger in ledgers), [ledger.calls for ledger in ledgers]
    sessions = [SHARED, *(f"own-{n}" for n in range(THREADS))]
    for session in sessions:
        check_session(store, session, ledgers)
    report = store.verify_projections()
    assert report.ok, report.problems[:10]
    store.rebuild_projections()
    for session in sessions:
        check_session(store, session, ledgers)
    assert store.verify_projections().ok


def test_threads_sharing_one_store_lose_nothing_and_duplicate_nothing(
    store: TranscriptStore,
) -> None:
    run_threads(store)


def test_threads_sharing_one_store_lose_nothing_while_another_thread_rebuilds_the_views(
    store: TranscriptStore,
) -> None:
    run_threads(store, rebuild_every=1.5)
