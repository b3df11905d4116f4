"""Fixtures of the read-model tests (their helpers live in tests/support/: rows, log, reads)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from transcripts import TranscriptStore


@pytest.fixture
def fill() -> Callable[[TranscriptStore], None]:
    """Two sessions with messages, a committed compaction (with a kept message), a failed one,
    and a rewind of two messages, one of them restored."""

    def write(store: TranscriptStore) -> None:
        store.start("alpha", source="cli", model="model-a", metadata={"cwd": "/tmp"})
        store.start("beta", parent_id="alpha")
        store.append(
            "alpha",
            [
                {"id": "a1", "role": "user", "content": "question"},
                {"id": "a2", "role": "assistant", "content": "answer"},
                {"id": "a3", "role": "user", "content": "follow-up"},
                {"id": "a4", "role": "assistant", "content": "more"},
            ],
        )
        store.append(
            "beta",
            [
                {"id": "b1", "role": "user", "content": "hi"},
                {"id": "b2", "role": "assistant", "content": "yo"},
            ],
        )
        attempt = store.begin_compaction("alpha")
        result = store.commit_compaction(
            attempt,
            [{"role": "system", "content": "summary"}, attempt.messages[-1]],
            reason="too long",
            tokens_before=100,
            tokens_after=10,
        )
        assert result.committed
        assert not store.compact("alpha", lambda messages: 1 / 0, reason="fails").committed
        store.append("alpha", [{"id": "a5", "role": "user", "content": "after"}])
        store.append("alpha", [{"id": "a6", "role": "user", "content": "oops"}])
        store.rewind("alpha", count=2, reason="undo")  # a5 and a6
        store.append("alpha", [{"id": "a5", "role": "user", "content": "after"}])  # restored
        store.catch_up_projections()  # plain SQL reads the views as of the last catch-up

    return write
