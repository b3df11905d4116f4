"""Writers to kill, and the checks a store must pass after a kill (test_crash_safety.py and
test_torn_writes.py).

Run as a script, the module is a child program:

    python crash_support.py write URL SESSION RUN SEED WORKLOAD   (appends|compactions|rebuilds)
    python crash_support.py create URL SESSION                    (opens a new store, appends)
    python crash_support.py torn URL SESSION SEED                 (appends, a barrier, appends)
    python crash_support.py checkpoint URL SESSION RUN SEED       (appends and WAL checkpoints)

A child writes one JSON object per line to stdout and flushes it: an `intent` line before a
call, an `ack` line once the call returned (so an ack proves the call returned), and a `state`
line with the session's version and active ids read back after it. It runs until it is killed.

Imported by the tests, the module gives the parent side: `Child` (the process and its lines)
and `Ledger` (what the acks prove, and the checks of a reopened store).
"""

from __future__ import annotations

import json
import os
import queue
import random
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__)
STARTUP_TIMEOUT = 30.0  # a fresh interpreter importing the package, on a busy 2-core machine


def say(line: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


def wal_size(path: str) -> int:
    try:
        return os.path.getsize(path + "-wal")
    except FileNotFoundError:
        return 0


# -- the child programs ---------------------------------------------------------------------

WEIGHTS = {  # append, sync, compact, summarize error, interleaved compaction, rebuild
    "appends": (10, 3, 1, 0, 0, 0),
    "compactions": (3, 1, 4, 1, 2, 0),
    "rebuilds": (3, 0, 1, 0, 0, 4),
}
OPS = ("append", "sync", "compact", "summarize_error", "interleaved", "rebuild")


class Writer:
    """One child's session: what it wrote, for acks and for the next messages."""

    def __init__(self, url: str, session_id: str, run: str, seed: int, size: int = 40) -> None:
        from transcripts import TranscriptStore

        self.rng = random.Random(seed)
        self.run = run
        self.size = size
        self.count = 0
        self.session_id = session_id
        self.store = TranscriptStore.open(url)
        say({"ready": run})
        self.store.start(session_id, source="crash-test")
        self.known = {entry["id"] for entry in self.store.history(session_id)}
        self.held: list[list[dict]] = []
        self.state()

    def state(self) -> None:
        """Read the session back and report it: version and active ids."""
        active = self.store.active(self.session_id)
        (summary,) = [s for s in self.store.sessions() if s["id"] == self.session_id]
        self.held = [*self.held[-4:], active]
        self.version, self.active = summary["version"], [m["id"] for m in active]
        say({"state": self.version, "active": self.active})

    def local_state(self, new: list[str], **extra: Any) -> None:
        """Report the state after appending `new` without reading (the only writer knows it)."""
        self.version += len(new)
        self.active = [*self.active, *new]
        say({"state": self.version, "active": self.active, **extra})

    def message(self, *, with_id: bool = True) -> dict:
        self.count += 1
        text = f"run {self.run} message {self.count} " + "x" * self.rng.randrange(self.size)
        message = {"role": self.rng.choice(["user", "assistant"]), "content": text}
        return {"id": f"{self.run}-m{self.count}", **message} if with_id else message

    def append(self) -> list[str]:
        """Append a batch of new messages; return their ids."""
        size = self.rng.randint(1, 5)
        batch = [self.message(with_id=self.rng.random() < 0.8) for _ in range(size)]
        say({"intent": "append", "ids": [m["id"] for m in batch if "id" in m], "new": size})
        started = time.perf_counter()
        stored = self.store.append(self.session_id, batch)
        self.acked_messages("append", stored, time.perf_counter() - started)
        return [m["id"] for m in stored]

    def acked_messages(self, op: str, stored: list[dict], elapsed: float, **extra: Any) -> None:
        self.known.update(m["id"] for m in stored)
        say({"ack": op, "messages": stored, "elapsed": elapsed, **extra})

    def sync(self) -> None:
        live = [*self.rng.choice(self.held), self.message()]  # a stale or fresh list
        say({"intent": "append", "ids": [live[-1]["id"]], "new": 1})
        started = time.perf_counter()
        self.store.sync(self.session_id, live)
        self.acked_messages("append", [live[-1]], time.perf_counter() - started)

    def replacement(self, messages: list[dict]) -> list[dict]:
        keep_first = messages[:1] if self.rng.random() < 0.5 else []
        keep_last = messages[max(len(keep_first), len(messages) - self.rng.randint(0, 2)) :]
        summary = {"role": "system", "content": f"summary {self.run}-{self.count}"}
        self.count += 1
        return [*keep_first, summary, *keep_last]

    def compact(self, *, interleave: bool = False, fail: bool = False) -> None:
        started = time.perf_counter()
        if fail:

            def broken(messages: list[dict]) -> list[dict]:
                raise RuntimeError("the summarizer is down")

            say({"intent": "compact", "id": None})  # compact() makes the id up
            result = self.store.compact(self.session_id, broken, reason="crash test")
            snapshot: list[str] = []
        else:
            attempt = self.store.begin_compaction(self.session_id)
            say({"intent": "compact", "id": attempt.id})
            if interleave:
                self.append()  # acked on its own; the compaction keeps it as the tail
                self.state()
                say({"intent": "compact", "id": attempt.id})
            snapshot = [m["id"] for m in attempt.messages]
            replacement = self.replacement(attempt.messages)
            result = self.store.commit_compaction(attempt, replacement, reason="crash test")
        kept = {m["id"] for m in result.messages}
        added = [m["id"] for m in result.messages if m["id"] not in self.known]
        self.known.update(added)
        say({
            "ack": "compact", "id": result.compaction_id, "committed": result.committed,
            "failure": result.failure,
            "superseded": [i for i in snapshot if i not in kept] if result.committed else None,
            "added": added, "elapsed": time.perf_counter() - started,
        })  # fmt: skip

    def rebuild(self) -> None:
        say({"intent": "rebuild"})
        started = time.perf_counter()
        replayed = self.store.rebuild_projections()
        say({"ack": "rebuild", "replayed": replayed, "elapsed": time.perf_counter() - started})


def write(url: str, session_id: str, run: str, seed: str, workload: str) -> None:
    writer = Writer(url, session_id, run, int(seed))
    while True:
        op = writer.rng.choices(OPS, weights=WEIGHTS[workload])[0]
        if op == "append":
            writer.append()
        elif op == "sync":
            writer.sync()
        elif op == "compact":
            writer.compact()
        elif op == "summarize_error":
            writer.compact(fail=True)
        elif op == "interleaved":
            writer.compact(interleave=True)
        else:
            writer.rebuild()
        writer.state()


def create(url: str, session_id: str) -> None:
    """Open (and so create) a store, then start a session and append to it."""
    from transcripts import TranscriptStore

    say({"intent": "open"})
    started = time.perf_counter()
    store = TranscriptStore.open(url)
    say({"ack": "open", "elapsed": time.perf_counter() - started})
    say({"intent": "start"})
    store.start(session_id, source="crash-test")
    message = {"id": "first", "role": "user", "content": "the first message"}
    store.append(session_id, [message])
    say({"ack": "append", "messages": [message], "elapsed": 0})
    store.close()
    sys.stdin.readline()  # wait to be killed


def torn(url: str, session_id: str, seed: str) -> None:
    """Appends (each acked with the WAL size after it), a barrier, then appends until killed.

    Only appends and no reads after the barrier, so the WAL grows by the appends' frames
    only and the size after an ack is where its transaction ends in the WAL."""
    path = url.removeprefix("sqlite:///")
    writer = Writer(url, session_id, "t", int(seed))
    for _ in range(5):
        writer.local_state(writer.append(), wal=wal_size(path))
    say({"baseline": wal_size(path)})
    if sys.stdin.readline().strip() != "go":
        raise SystemExit("expected go")
    while True:
        writer.local_state(writer.append(), wal=wal_size(path))


def checkpoint(url: str, session_id: str, run: str, seed: str) -> None:
    """Appends of large messages, then a WAL checkpoint on a connection of its own, again."""
    path = url.removeprefix("sqlite:///")
    writer = Writer(url, session_id, run, int(seed), size=6000)
    modes = ("FULL", "RESTART", "TRUNCATE", "PASSIVE")
    with closing(sqlite3.connect(path, timeout=30, isolation_level=None)) as connection:
        for round_ in range(1_000_000):
            for _ in range(12):
                writer.local_state(writer.append())
            mode = modes[round_ % len(modes)]
            say({"intent": "checkpoint", "mode": mode, "wal": wal_size(path)})
            started = time.perf_counter()
            busy, frames, done = connection.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
            say({"ack": "checkpoint", "busy": busy, "frames": frames, "checkpointed": done,
                 "elapsed": time.perf_counter() - started})  # fmt: skip


# -- the parent side ------------------------------------------------------------------------


class Child:
    """A child program; its stdout lines are parsed in a thread as they arrive."""

    def __init__(self, directory: Path, name: str, *args: str) -> None:
        self.name = name
        self.stderr_path = directory / f"{name}.stderr"
        with self.stderr_path.open("w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, str(SCRIPT), *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        self.lines: queue.Queue[dict | None] = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def next(self, timeout: float = STARTUP_TIMEOUT) -> dict:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            message = f"{self.name}: no line within {timeout} s\n{self.stderr()}"
            raise AssertionError(message) from None
        if line is None:
            self.process.wait(timeout=10)
            raise AssertionError(
                f"{self.name} ended (exit {self.process.returncode}) before it was killed:\n"
                + self.stderr()
            )
        self.seen.append(line)
        return line

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def kill(self) -> list[dict]:
        """SIGKILL the child, wait for it, and return every line it printed."""
        self.process.kill()
        self.process.wait(timeout=10)
        while True:
            try:
                line = self.lines.get(timeout=10)
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        assert "Traceback" not in self.stderr(), f"{self.name}:\n{self.stderr()}"
        return self.seen

    def stderr(self) -> str:
        return self.stderr_path.read_text()


@dataclass
class Ledger:
    """What acknowledged calls prove about one session, across killed runs."""

    session_id: str
    started: bool = False
    messages: dict[str, dict] = field(default_factory=dict)  # acked appends, by id
    append_order: list[str] = field(default_factory=list)
    compactions: dict[str, dict] = field(default_factory=dict)  # acked, by id
    version: int = 0  # of the last state line (or of the last check)
    active: list[str] = field(default_factory=list)
    in_flight: dict | None = None  # the last intent not followed by a state line

    def record(self, lines: list[dict]) -> None:
        """Take in what a killed child printed."""
        self.in_flight = None
        for line in lines:
            if "ready" in line:
                continue
            if "intent" in line:
                self.in_flight = line
            elif "ack" in line:
                if "messages" in line:
                    for message in line["messages"]:
                        if message["id"] not in self.messages:
                            self.append_order.append(message["id"])
                        self.messages[message["id"]] = message
                elif line["ack"] == "compact":
                    self.compactions[line["id"]] = line
            elif "state" in line:
                self.in_flight = None
                self.started = True
                self.version, self.active = line["state"], line["active"]

    def check(self, url: str) -> None:
        """Reopen the store and check what a killed writer must leave behind."""
        from transcripts import SessionNotFoundError, TranscriptStore

        path = url.removeprefix("sqlite:///")
        with closing(sqlite3.connect(path)) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        with TranscriptStore.open(url) as store:
            if not self.started:
                try:
                    store.active(self.session_id)
                except SessionNotFoundError:
                    return
            check_session(store, self)
            report = store.verify_projections()
            assert report.ok, [str(problem) for problem in report.problems]
            for status in store.projection_status():
                assert status.position == status.head, status
            self.started = True
            self.version = len(store.events(self.session_id))
            self.active = [m["id"] for m in store.active(self.session_id)]


def check_session(store: Any, ledger: Ledger) -> None:
    session_id = ledger.session_id
    history = store.history(session_id)
    by_id = {entry["id"]: entry for entry in history}
    active = store.active(session_id)
    active_ids = [m["id"] for m in active]
    # No id twice.
    assert len(by_id) == len(history), "an id is twice in the history"
    assert len(set(active_ids)) == len(active_ids), "an id is twice in the active list"
    assert set(active_ids) == {entry["id"] for entry in history if entry["active"]}
    # Every append that returned is there, with its content.
    missing = [i for i in ledger.messages if i not in by_id]
    assert not missing, f"acknowledged messages lost: {missing}"
    for message_id, message in ledger.messages.items():
        assert by_id[message_id]["message"] == message
    # The log up to the last acknowledged state is what the writer saw then.
    events = store.events(session_id)
    assert [e["version"] for e in events] == list(range(1, len(events) + 1))
    if ledger.version:
        assert len(events) >= ledger.version
        assert [m["id"] for m in store.active_at(session_id, ledger.version)] == ledger.active
    # After it, at most the call in flight, whole: an append's events or one compaction event.
    later = events[ledger.version :] if ledger.version else []
    flight = ledger.in_flight
    if later:
        assert flight is not None, f"events after the last acknowledged state: {later}"
        if flight["intent"] == "append":
            assert {e["type"] for e in later} == {"MessageAppended"}
            assert len(later) == flight["new"], "an append was stored in part"
            assert set(flight["ids"]) <= {e["data"]["message_id"] for e in later}
        elif flight["intent"] == "compact":
            assert len(later) == 1, "a compaction wrote more than one event"
            assert later[0]["type"] in ("CompactionCommitted", "CompactionFailed")
            assert flight["id"] in (None, later[0]["data"]["compaction_id"])
        else:
            raise AssertionError(f"a {flight['intent']} wrote events: {later}")
    # No compaction half applied; the audit is the log's.
    audit = store.compactions(session_id)
    settled = [e for e in events if e["type"] in ("CompactionCommitted", "CompactionFailed")]
    assert [entry["id"] for entry in audit] == [e["data"]["compaction_id"] for e in settled]
    later_supersession = {}
    for entry, event in zip(audit, settled, strict=True):
        data = event["data"]
        assert entry["version"] == event["version"]
        if event["type"] == "CompactionFailed":
            assert entry["status"] == "failed" and entry["added"] == []
            assert entry["superseded"] == data["would_supersede"]
            continue
        assert entry["status"] == "committed"
        assert entry["superseded"] == data["superseded"]
        assert entry["added"] == [new["id"] for new in data["added"]]
        for message_id in entry["superseded"]:
            assert by_id[message_id]["active"] is False
            assert by_id[message_id]["superseded_by"] == entry["id"]
            later_supersession[message_id] = entry["version"]
        for new in data["added"]:
            assert by_id[new["id"]]["added_by"] == entry["id"]
            assert by_id[new["id"]]["message"] == {"id": new["id"], **new["message"]}
        for message_id in data["order"]:
            assert message_id in by_id
    for entry in audit:
        if entry["status"] == "committed":
            for message_id in entry["added"]:
                still = by_id[message_id]["active"]
                superseded_after = later_supersession.get(message_id, 0) > entry["version"]
                assert still or superseded_after, f"{message_id} of {entry['id']} vanished"
    # Every acknowledged compaction is in the audit as it was acknowledged.
    by_compaction = {entry["id"]: entry for entry in audit}
    for compaction_id, ack in ledger.compactions.items():
        entry = by_compaction[compaction_id]
        assert entry["status"] == ("committed" if ack["committed"] else "failed")
        if ack["committed"]:
            assert entry["superseded"] == ack["superseded"]
            assert entry["added"] == ack["added"]
        else:
            assert entry["failure"] == ack["failure"]


if __name__ == "__main__":
    command, *arguments = sys.argv[1:]
    {"write": write, "create": create, "torn": torn, "checkpoint": checkpoint}[command](*arguments)
