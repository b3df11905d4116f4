"""A live follower on PostgreSQL while several real processes write (issue 5).

The appends and compaction races of several processes run on PostgreSQL too, in
test_multiple_processes.py; here `transcripts projections follow` projects while they write.
"""

from __future__ import annotations

import signal

import pytest

from support.cli import COMMAND
from support.processes import RUN_TIMEOUT, Spawn, program, release_together
from transcripts import TranscriptStore

pytestmark = pytest.mark.slow

PROCESSES = 4
PER_WORKER = 50  # as in workers.py


def test_four_processes_appending_to_their_own_sessions_while_a_follower_projects_lose_nothing(
    postgres_url: str, spawn: Spawn
) -> None:
    TranscriptStore.open(postgres_url).close()
    follower = spawn(
        "follower",
        [*COMMAND, "--db", postgres_url, "projections", "follow"],
    )
    try:
        workers = [
            spawn(
                f"appender-{i}",
                program("workers.py", "append", postgres_url, f"session-{i}", str(i), "shared"),
            )
            for i in range(PROCESSES)
        ]
        release_together(workers, "ready")
        results = [worker.result() for worker in workers]
    finally:
        follower.process.send_signal(signal.SIGTERM)
        follower.process.wait(timeout=RUN_TIMEOUT)
    assert follower.process.returncode == 0, follower.stderr()
    assert "Traceback" not in follower.stderr()

    with TranscriptStore.open(postgres_url) as store:
        for i, result in enumerate(results):
            history = store.history(f"session-{i}")
            assert [entry["id"] for entry in history] == [m["id"] for m in result["stored"]]
            assert store.active(f"session-{i}") == result["stored"]
        summaries = {summary["id"]: summary for summary in store.sessions()}
        assert set(summaries) == {f"session-{i}" for i in range(PROCESSES)}
        assert all(s["messages"] == s["active"] == PER_WORKER for s in summaries.values())
        assert store.verify_projections().ok
