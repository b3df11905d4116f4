"""A write whose commit landed but was reported as failed (a connection dropped right after
COMMIT) is retried by the store, and the retry finds what landed: every message once (ids
of messages without one are chosen once per call), a compaction committed once and reported
committed, a failure recorded once, a rewind taking out once what it decided (and returning
it) — on every backend.

The fault is injected at the storage seam: a backend whose write transactions commit, then
raise the error a dropped connection raises, the first `times` of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from eventsourcing.persistence import OperationalError

from transcripts import Append, Compact, Rewind, SetState, StoreConfig, TranscriptStore
from transcripts.application.storage import Backend

S = "s"


class CommitsThenFails:
    """A backend whose next `times` write transactions commit, then raise."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.times = 0
        self.raised = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    @contextmanager
    def writing(self, log: Any, stream: Any = None) -> Iterator[Any]:
        with self.backend.writing(log, stream) as tx:
            yield tx
        if self.times:  # committed: now the connection "drops"
            self.times -= 1
            self.raised += 1
            raise OperationalError("server closed the connection unexpectedly")


@pytest.fixture
def faulty(store_url: str) -> Iterator[tuple[TranscriptStore, CommitsThenFails]]:
    config = StoreConfig.from_url(store_url, lock_timeout=5)
    backend = CommitsThenFails(config.backend)
    store = TranscriptStore(dataclasses.replace(config, backend=backend))  # type: ignore[arg-type]
    try:
        store.start(S)
        yield store, backend
    finally:
        store.close()


def types(store: TranscriptStore) -> list[str]:
    return [event["type"] for event in store.events(S)]


def test_an_append_whose_commit_was_reported_failed_stores_each_message_once(
    faulty: tuple[TranscriptStore, CommitsThenFails],
) -> None:
    store, backend = faulty
    backend.times = 2
    messages = [
        {"role": "user", "content": "no id"},
        {"id": "given", "role": "user", "content": "x"},
    ]
    returned = store.append(S, messages)
    assert backend.raised == 2
    assert [m["id"] for m in store.active(S)] == [m["id"] for m in returned]
    assert types(store) == ["Started", "MessageAppended", "MessageAppended"]
    assert store.verify_projections().ok


def test_a_commit_of_a_compaction_reported_failed_is_committed_once_and_says_so(
    faulty: tuple[TranscriptStore, CommitsThenFails],
) -> None:
    store, backend = faulty
    store.append(S, [{"role": "user", "content": f"turn {i}"} for i in range(3)])
    attempt = store.begin_compaction(S)
    backend.times = 1
    result = store.commit_compaction(attempt, [{"role": "system", "content": "summary"}])
    assert backend.raised == 1
    assert (result.committed, result.failure) == (True, None)
    assert types(store)[-1] == "CompactionCommitted" and "CompactionFailed" not in types(store)
    assert result.messages == store.active(S)
    assert [entry["status"] for entry in store.compactions(S)] == ["committed"]


def test_compact_whose_commit_was_reported_failed_returns_committed(
    faulty: tuple[TranscriptStore, CommitsThenFails],
) -> None:
    store, backend = faulty
    store.append(S, [{"role": "user", "content": f"turn {i}"} for i in range(3)])

    def summarize(messages: list[dict]) -> list[dict]:
        backend.times = 1  # the commit that follows is reported failed
        return [{"role": "system", "content": "summary"}, messages[-1]]

    result = store.compact(S, summarize)
    assert result.committed
    assert types(store).count("CompactionCommitted") == 1
    assert len(store.active(S)) == 2


def test_a_failure_whose_record_was_reported_failed_is_recorded_once(
    faulty: tuple[TranscriptStore, CommitsThenFails],
) -> None:
    store, backend = faulty
    store.append(S, [{"role": "user", "content": "turn"}])
    attempt = store.begin_compaction(S)
    backend.times = 1
    result = store.fail_compaction(attempt, "the summarizer timed out")
    assert (result.committed, result.failure) == (False, "summarize_error")
    assert types(store).count("CompactionFailed") == 1


def test_a_start_and_an_erasure_reported_failed_land_once(
    faulty: tuple[TranscriptStore, CommitsThenFails],
) -> None:
    store, backend = faulty
    backend.times = 1
    store.start("other", source="test")
    assert [event["type"] for event in store.events("other")] == ["Started"]
    backend.times = 1
    erasure = store.forget("other")
    assert backend.raised == 2
    assert not erasure.already_erased
    assert [event["type"] for event in store.events("other")] == ["Erased"]


def test_a_rewind_whose_commit_was_reported_failed_rewinds_once_and_returns_what_it_took(
    faulty: tuple[TranscriptStore, CommitsThenFails],
) -> None:
    store, backend = faulty
    stored = store.append(S, [{"role": "user", "content": f"turn {i}"} for i in range(4)])
    backend.times = 2
    assert store.rewind(S, count=1) == [stored[-1]]  # the popped item, as pop_item needs it
    assert backend.raised == 2
    assert types(store).count("Rewound") == 1
    assert store.active(S) == stored[:-1]
    backend.times = 1
    assert store.rewind(S, count=100) == stored[:-1]  # every active message: cleared once
    assert types(store).count("Rewound") == 2
    assert store.active(S) == []
    assert store.verify_projections().ok


def test_a_write_whose_commit_was_reported_failed_makes_each_change_once(
    faulty: tuple[TranscriptStore, CommitsThenFails],
) -> None:
    store, backend = faulty
    stored = store.append(S, [{"role": "user", "content": f"turn {i}"} for i in range(3)])
    changes = [
        Rewind(count=1),
        Append([{"role": "assistant", "content": "no id"}]),
        Compact([{"id": "sum", "role": "system", "content": "summary"}, stored[1]]),
        SetState({"head": "sum"}),
    ]
    backend.times = 2
    version = store.write(S, changes, expected_version=4)
    assert backend.raised == 2
    written = ["Rewound", "MessageAppended", "CompactionCommitted", "StateChanged"]
    assert types(store) == ["Started", *["MessageAppended"] * 3, *written]
    assert version == store.version(S) == 8
    assert [m["id"] for m in store.active(S)][:2] == ["sum", stored[1]["id"]]
    assert store.session(S)["state"] == {"head": "sum"}
    assert store.verify_projections().ok
