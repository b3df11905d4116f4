"""A process projecting the views is killed (SIGKILL) mid-way: between two batches, inside a
batch's transaction, or wherever it happens to be. A catch-up resumes from the tracked
position without a duplicate or a missing row; a rebuild leaves the live views untouched,
and a later rebuild succeeds.

The child program is support/programs/projection_worker.py, run with this interpreter. The
views are made to lag behind a log of about 20,000 events written with the event-sourcing
library's own recorder (no view sees them until a store catches up).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from support import log
from support.processes import Child, Spawn, program
from support.rows import connect, head, raw_rows, tracked
from transcripts import TranscriptStore
from transcripts.domain.transcript import Transcript

pytestmark = pytest.mark.slow

SESSIONS, MESSAGES, COMPACT_EVERY = 4, 5000, 1200
EVENTS = SESSIONS * (1 + MESSAGES + MESSAGES // COMPACT_EVERY)  # 20,020
MODES = ["between-batches", "inside-a-batch", "running"]
TIMEOUT = 60.0


# -- the store file, read and written without the views ------------------------------------


def leftover_tables(url: str) -> list[str]:
    with connect(url) as db:
        return [
            r[0]
            for r in db.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE '%\\_\\_next' ESCAPE '\\'"
            )
        ]


def messages_up_to(url: str, position: int) -> int:
    """How many message_history rows the events up to `position` make: one per append, one
    per summary a compaction adds (each bulk compaction adds one)."""
    with connect(url) as db:
        return db.execute(
            "SELECT COUNT(*) FROM stored_events WHERE rowid <= ? AND topic IN (?, ?)",
            (position, Transcript.MessageAppended.TOPIC, Transcript.CompactionCommitted.TOPIC),
        ).fetchone()[0]


def write_behind_the_views(url: str) -> None:
    """EVENTS events in one transaction, with the library's own recorder."""
    log.write_behind_the_views(url, SESSIONS, MESSAGES, compact_every=COMPACT_EVERY)


# -- the child process ----------------------------------------------------------------------


def worker(spawn: Spawn, operation: str, url: str, mode: str) -> Child:
    """projection_worker.py in a child process, ready: it waits for `go`."""
    child = spawn("worker", program("projection_worker.py", operation, url, mode), timeout=TIMEOUT)
    child.wait_for(lambda line: line == "ready")
    return child


def stop_point(mode: str) -> Callable[[str], bool]:
    if mode == "running":
        return lambda line: line.startswith("progress")  # killed at once, while it goes on
    return lambda line: line == "paused"


# -- the tests ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_catch_up_killed_mid_way_resumes_from_the_tracked_position_without_duplicates(
    sqlite_url: str, spawn: Spawn, mode: str
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        store.start("live")
        store.append("live", [{"id": "x", "role": "user", "content": "projected before"}])
        assert store.active("live")
    start = tracked(sqlite_url)
    child = worker(spawn, "catch-up", sqlite_url, mode)
    write_behind_the_views(sqlite_url)
    end = head(sqlite_url)
    assert end - start == EVENTS
    child.go()
    child.wait_for(stop_point(mode))
    child.kill()

    position = tracked(sqlite_url)
    assert start < position < end, "killed mid-way"
    if mode != "running":
        assert position == start + 2000  # two committed batches; the third one was rolled back
    # What the crash left is exactly what the tracked position says: no half batch.
    with connect(sqlite_url) as db:
        assert db.execute("SELECT COUNT(*) FROM message_history").fetchone()[0] == messages_up_to(
            sqlite_url, position
        )

    with TranscriptStore.open(sqlite_url) as store:  # opening catches up from the position
        assert tracked(sqlite_url) == end
        report = store.verify_projections()
        assert report.ok, [str(problem) for problem in report.problems[:10]]
        resumed = raw_rows(sqlite_url)
        assert len(resumed["message_history"]) == 1 + SESSIONS * (
            MESSAGES + MESSAGES // COMPACT_EVERY
        )
        assert len(resumed["sessions"]) == 1 + SESSIONS
        assert resumed["quarantined_events"] == []
        assert store.catch_up_projections() == 0
        store.rebuild_projections()  # what a clean replay of the whole log gives
        assert raw_rows(sqlite_url) == resumed


@pytest.mark.parametrize("mode", MODES)
def test_a_rebuild_killed_mid_way_leaves_the_live_views_intact_and_a_later_rebuild_succeeds(
    sqlite_url: str, spawn: Spawn, mode: str
) -> None:
    write_behind_the_views(sqlite_url)
    with TranscriptStore.open(sqlite_url) as store:  # caught up on open
        assert store.verify_projections().ok
        expected_reads = {s["id"]: store.active(s["id"]) for s in store.sessions()}
    before = raw_rows(sqlite_url)
    child = worker(spawn, "rebuild", sqlite_url, mode)
    with TranscriptStore.open(sqlite_url) as reader:
        child.go()
        child.wait_for(stop_point(mode))
        # Readers are served the complete live views while the rebuild runs (even while it
        # holds the write lock inside a batch).
        assert {s["id"]: reader.active(s["id"]) for s in reader.sessions()} == expected_reads
        child.kill()
    assert raw_rows(sqlite_url) == before

    with TranscriptStore.open(sqlite_url) as store:
        assert store.verify_projections().ok
        assert {s["id"]: store.active(s["id"]) for s in store.sessions()} == expected_reads
        assert store.rebuild_projections() == EVENTS
        assert store.verify_projections().ok
    assert raw_rows(sqlite_url) == before
    assert leftover_tables(sqlite_url) == []
