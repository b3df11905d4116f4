"""Several real processes writing one PostgreSQL store at once (issue 5).

The children run tests/e2e/workers.py (the programs the SQLite multi-process tests use) with
a postgresql:// URL. They synchronise with the parent over pipes: a child prints a status
line and blocks on stdin until the parent writes `go`, so every race is set up by a barrier.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from transcripts import TranscriptStore

pytestmark = pytest.mark.slow

WORKERS = Path(__file__).with_name("workers.py")
PROCESSES = 4
ANONYMOUS, OWN_IDS, SHARED = 20, 15, 15  # as in workers.py
PER_WORKER = ANONYMOUS + OWN_IDS + SHARED
TIMEOUT = 90.0


class Child:
    """A child process; its stdout lines arrive on a queue."""

    def __init__(self, directory: Path, name: str, command: list[str]) -> None:
        self.name = name
        self.stderr_path = directory / f"{name}.stderr"
        with self.stderr_path.open("w") as stderr:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def expect(self, prefix: str) -> str:
        try:
            line = self.lines.get(timeout=TIMEOUT)
        except queue.Empty:
            pytest.fail(f"{self.name}: no {prefix!r} within {TIMEOUT} s\n{self.stderr()}")
        if line is None or not line.startswith(prefix):
            pytest.fail(f"{self.name}: expected {prefix!r}, got {line!r}\n{self.stderr()}")
        return line[len(prefix) :].strip()

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def result(self) -> dict:
        code = self.process.wait(timeout=TIMEOUT)
        lines = []
        while (line := self.lines.get(timeout=TIMEOUT)) is not None:
            lines.append(line)
        assert code == 0, f"{self.name} exited with {code}:\n{self.stderr()}"
        assert "Traceback" not in self.stderr(), self.stderr()
        return json.loads(lines[-1])

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=TIMEOUT)


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator:
    children: list[Child] = []

    def start(name: str, *args: str) -> Child:
        child = Child(tmp_path, name, [sys.executable, str(WORKERS), *args])
        children.append(child)
        return child

    yield start
    for child in children:
        child.stop()


def release_together(children: list[Child], status: str) -> list[str]:
    reports = [child.expect(status) for child in children]
    for child in children:
        child.go()
    return reports


def without_id(message: dict) -> dict:
    return {key: value for key, value in message.items() if key != "id"}


def test_four_processes_appending_to_one_postgresql_session_store_every_message_exactly_once(
    postgres_url: str, spawn
) -> None:
    TranscriptStore.open(postgres_url).close()
    workers = [
        spawn(f"appender-{i}", "append", postgres_url, "shared-session", str(i), "shared")
        for i in range(PROCESSES)
    ]
    release_together(workers, "ready")
    results = [worker.result() for worker in workers]

    sent_by_id: dict[str, dict] = {}
    for result in results:
        assert len(result["stored"]) == PER_WORKER
        for sent, stored in zip(result["sent"], result["stored"], strict=True):
            assert without_id(stored) == without_id(sent)
            assert sent_by_id.setdefault(stored["id"], without_id(sent)) == without_id(sent)
    expected = PROCESSES * (ANONYMOUS + OWN_IDS) + SHARED
    assert len(sent_by_id) == expected

    with TranscriptStore.open(postgres_url) as store:
        history = store.history("shared-session")
        ids = [entry["id"] for entry in history]
        assert len(ids) == len(set(ids)) == expected
        assert set(ids) == set(sent_by_id)
        assert [message["id"] for message in store.active("shared-session")] == ids
        types = Counter(event["type"] for event in store.events("shared-session"))
        assert types == {"Started": 1, "MessageAppended": expected}
        position = {message_id: n for n, message_id in enumerate(ids)}
        for result in results:  # each worker's own messages keep their order
            own = [s["id"] for s in result["stored"] if not s["id"].startswith("shared-")]
            assert [position[i] for i in own] == sorted(position[i] for i in own)
        assert store.verify_projections().ok


def test_four_processes_appending_to_their_own_sessions_while_a_follower_projects_lose_nothing(
    postgres_url: str, spawn, tmp_path: Path
) -> None:
    TranscriptStore.open(postgres_url).close()
    follower = Child(
        tmp_path,
        "follower",
        [sys.executable, "-m", "transcripts", "--db", postgres_url, "projections", "follow"],
    )
    try:
        workers = [
            spawn(f"appender-{i}", "append", postgres_url, f"session-{i}", str(i), "shared")
            for i in range(PROCESSES)
        ]
        release_together(workers, "ready")
        results = [worker.result() for worker in workers]
    finally:
        follower.process.send_signal(signal.SIGTERM)
        follower.process.wait(timeout=TIMEOUT)
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


def test_racing_compactions_from_four_processes_on_postgresql_commit_one_and_the_rest_conflict(
    postgres_url: str, spawn
) -> None:
    with TranscriptStore.open(postgres_url) as store:
        store.start("race", source="e2e")
        turns = [{"role": ("user", "assistant")[n % 2], "content": f"turn {n}"} for n in range(8)]
        seeded_ids = [message["id"] for message in store.append("race", turns)]
        seeded_version = len(store.events("race"))

    workers = [
        spawn(f"compactor-{i}", "compact", postgres_url, "race", str(i)) for i in range(PROCESSES)
    ]
    begun = [json.loads(report) for report in release_together(workers, "begun")]
    assert {report["version"] for report in begun} == {seeded_version}
    results = [worker.result() for worker in workers]

    winners = [result for result in results if result["committed"]]
    losers = [result for result in results if not result["committed"]]
    assert len(winners) == 1, [(r["committed"], r["failure"], r["error"]) for r in results]
    [winner] = winners
    assert [loser["failure"] for loser in losers] == ["conflict"] * (PROCESSES - 1)
    assert all(loser["messages"] == winner["messages"] for loser in losers)

    with TranscriptStore.open(postgres_url) as store:
        assert store.active("race") == winner["messages"]
        audit = store.compactions("race")
        assert audit[0]["id"] == winner["attempt"]
        assert [entry["status"] for entry in audit] == ["committed"] + ["failed"] * 3
        assert all(entry["failure"] == "conflict" for entry in audit[1:])
        assert all(entry["superseded"] == seeded_ids for entry in audit)
        [summary] = store.sessions()
        assert (summary["compactions_committed"], summary["compactions_failed"]) == (1, 3)
        assert store.verify_projections().ok
