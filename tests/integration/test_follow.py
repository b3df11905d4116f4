"""Live projection: followers keep the views up to date as the log grows, exactly once.

On PostgreSQL a follower listens (LISTEN/NOTIFY through the library's subscription); on
SQLite it polls. A store projects its own writes in their transaction, so the writers here
write behind the views (`WriterBehindTheViews`, as an older release or another program on the
log does). The rows are read with plain SQL, never through a store query (a query would
catch the views up by itself).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from support.cli import COMMAND
from support.log import WriterBehindTheViews
from support.postgres import sql
from support.rows import active_ids, head, query, tracked
from transcripts import TranscriptStore

WAIT = 10.0  # seconds a test waits for the views to show a write


@pytest.fixture(params=["sqlite", "postgres"])
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store several store objects (and processes) can open."""
    if request.param == "postgres":
        return request.getfixturevalue("postgres_url")
    return f"sqlite:///{tmp_path / 'store.db'}"


def eventually(check: Callable[[], bool], timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not true within {timeout} s")
        time.sleep(0.02)


def messages(prefix: str, n: int) -> list[dict]:
    return [{"id": f"{prefix}-{i}", "role": "user", "content": f"{prefix} {i}"} for i in range(n)]


def test_a_follower_projects_what_another_store_object_appends_without_anyone_querying(
    shared_url: str,
) -> None:
    with TranscriptStore.open(shared_url) as follower, WriterBehindTheViews(shared_url) as writer:
        with follower.following_projections():
            writer.start("s")
            writer.append("s", messages("m", 3))
            eventually(lambda: active_ids(shared_url, "s") == ["m-0", "m-1", "m-2"])
            assert tracked(shared_url) == head(shared_url)


def test_a_stores_own_writes_are_in_the_views_when_they_return_with_no_follower(
    shared_url: str,
) -> None:
    with TranscriptStore.open(shared_url) as store:
        store.start("s")
        store.append("s", messages("m", 3))
        assert active_ids(shared_url, "s") == ["m-0", "m-1", "m-2"]
        store.compact("s", lambda context: [{"role": "system", "content": "summary"}])
        assert len(active_ids(shared_url, "s")) == 1
        assert tracked(shared_url) == head(shared_url)


def test_followers_and_readers_catching_up_at_once_project_every_event_exactly_once(
    shared_url: str,
) -> None:
    with (
        TranscriptStore.open(shared_url) as one,
        TranscriptStore.open(shared_url) as two,
        TranscriptStore.open(shared_url) as reader,
        WriterBehindTheViews(shared_url) as writer,
    ):
        writer.start("s")
        with one.following_projections(), two.following_projections():
            for call in range(40):
                writer.append("s", messages(f"c{call}", 5))
                if call % 5 == 0:
                    reader.active("s")  # a reader catching up, racing the followers
            expected = [f"c{call}-{i}" for call in range(40) for i in range(5)]
            eventually(lambda: active_ids(shared_url, "s") == expected)
        [(history,)] = query(shared_url, "SELECT COUNT(*) FROM message_history")
        assert history == 200
        assert reader.verify_projections().ok
        assert tracked(shared_url) == head(shared_url)


def test_follow_projects_a_burst_in_batches_and_reports_each_batch(shared_url: str) -> None:
    with TranscriptStore.open(shared_url) as follower, WriterBehindTheViews(shared_url) as writer:
        writer.start("s")
        batches: list[int] = []
        stop = threading.Event()
        thread = threading.Thread(target=follower.follow_projections, args=(stop, batches.append))
        thread.start()
        try:
            eventually(lambda: sum(batches) == 1)  # the Started event
            for call in range(3):
                writer.append("s", messages(f"burst{call}", 700))  # 700 events per transaction
            eventually(lambda: sum(batches) == 1 + 2100)
        finally:
            stop.set()
            thread.join()
        assert len(batches) < 1 + 2100 / 100  # whole batches, not an event at a time
        assert max(batches) <= 1000
        assert len(active_ids(shared_url, "s")) == 2100


def test_a_follower_resumes_from_the_tracked_position_and_projects_nothing_twice(
    shared_url: str,
) -> None:
    TranscriptStore.open(shared_url).close()  # creates the tables
    with WriterBehindTheViews(shared_url) as writer:
        writer.start("s")
        writer.append("s", messages("before", 10))
        with TranscriptStore.open(shared_url) as follower:
            assert follower.catch_up_projections() == 0  # opening caught up already
        writer.append("s", messages("after", 7))
        with TranscriptStore.open(shared_url) as follower:
            # opening catches up too: append after opening, to see the follower do it
            writer.append("s", messages("later", 4))
            stop = threading.Event()
            batches: list[int] = []
            thread = threading.Thread(
                target=follower.follow_projections, args=(stop, batches.append)
            )
            thread.start()
            eventually(lambda: len(active_ids(shared_url, "s")) == 21)
            stop.set()
            thread.join()
            assert sum(batches) == 4
            assert follower.verify_projections().ok


def test_on_postgresql_a_follower_listens_for_notifications_instead_of_polling(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url) as store, store.following_projections():
        eventually(
            lambda: bool(
                sql(
                    postgres_url,
                    "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
                    "AND query LIKE 'LISTEN %%'",
                )
            )
        )


def follow_command(url: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [*COMMAND, "--db", url, "projections", "follow", "-v"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stderr is not None
    assert "Following the log" in process.stderr.readline()
    return process


@pytest.mark.slow
@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_the_follow_command_projects_live_and_stops_cleanly_on_a_signal(
    shared_url: str, signal_number: int
) -> None:
    TranscriptStore.open(shared_url).close()
    process = follow_command(shared_url)
    try:
        with WriterBehindTheViews(shared_url) as writer:
            writer.start("s")
            writer.append("s", messages("m", 5))
            eventually(lambda: len(active_ids(shared_url, "s")) == 5)
        process.send_signal(signal_number)
        out, err = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert "Traceback" not in err
    assert out.splitlines()[-1] == "Stopped after projecting 6 events."
    assert tracked(shared_url) == head(shared_url)
