"""A write that committed returns its result, whatever the views are doing (issue 36).

On PostgreSQL a write never waits for the views: while another process holds them — here a
catch-up or a rebuild stopped (SIGSTOP) inside a batch, its transaction open — `sync`,
`rewind` and `commit_compaction` store their events and answer at once, from the views as
they are and the log's events after them; never the lock timeout's `StorageError` for a
write that landed, never a committed compaction's superseded snapshot. What they answer is
what the log holds. Once the process goes on and ends, the views catch up and verify."""

from __future__ import annotations

import os
import signal

import pytest

from support.log import fold_of, write_behind_the_views
from support.messages import summary, turns
from support.processes import Spawn, program
from transcripts import TranscriptStore

pytestmark = pytest.mark.slow

S = "held"


@pytest.mark.parametrize("operation", ["catch-up", "rebuild"])
def test_writes_answer_from_the_log_while_a_stopped_process_holds_the_views(
    postgres_url: str, spawn: Spawn, operation: str
) -> None:
    store = TranscriptStore.open(postgres_url, lock_timeout=3)
    try:
        store.start(S)
        live = store.append(S, turns(6))
        attempt = store.begin_compaction(S)
        worker = spawn(
            "worker", program("projection_worker.py", operation, postgres_url, "inside-a-batch")
        )
        worker.expect("ready")
        write_behind_the_views(postgres_url, sessions=3, messages=1000)  # work for it
        worker.go()
        worker.wait_for(lambda line: line == "paused")  # inside its third batch's transaction
        os.kill(worker.process.pid, signal.SIGSTOP)
        try:
            result = store.commit_compaction(attempt, [summary(), *attempt.messages[-2:]])
            assert result.committed, result.error
            assert result.messages == fold_of(postgres_url, S).active()
            assert result.messages[1:] == live[-2:]

            new = {"role": "user", "content": "written while the views are held"}
            synced = store.sync(S, [*result.messages, new])
            assert synced == fold_of(postgres_url, S).active()
            assert [m["content"] for m in synced[-3:]] == [
                live[-2]["content"],
                live[-1]["content"],
                new["content"],
            ]

            (popped,) = store.rewind(S, count=1)
            assert popped == synced[-1]
            assert fold_of(postgres_url, S).active() == synced[:-1]
        finally:
            os.kill(worker.process.pid, signal.SIGCONT)
        worker.kill()
        store.catch_up_projections()
        assert store.active(S) == synced[:-1]
        report = store.verify_projections()
        assert report.ok, report.problems[:5]
    finally:
        store.close()
