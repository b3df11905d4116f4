"""Crash-test child programs: writers to kill (tests/processes/test_crash_safety.py and
test_torn_writes.py; their checks are support/crash.py).

    python crash_writer.py write URL SESSION RUN SEED WORKLOAD   (appends|compactions|rebuilds)
    python crash_writer.py create URL SESSION                    (opens a new store, appends)
    python crash_writer.py torn URL SESSION SEED                 (appends, a barrier, appends)
    python crash_writer.py checkpoint URL SESSION RUN SEED       (appends and WAL checkpoints)

A child writes one JSON object per line to stdout and flushes it: an `intent` line before a
call, an `ack` line once the call returned (so an ack proves the call returned), and a `state`
line with the session's version and active ids read back after it. It runs until it is killed.
"""

from __future__ import annotations

import os
import random
import sqlite3
import sys
import time
from contextlib import closing
from typing import Any

from parent import say, wait_for_go


def wal_size(path: str) -> int:
    try:
        return os.path.getsize(path + "-wal")
    except FileNotFoundError:
        return 0


# -- the programs ---------------------------------------------------------------------

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
    wait_for_go()
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


if __name__ == "__main__":
    command, *arguments = sys.argv[1:]
    {"write": write, "create": create, "torn": torn, "checkpoint": checkpoint}[command](*arguments)
