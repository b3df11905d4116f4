"""Append anatomy: what one `store.append(session, [message])` does to a SQLite file.

    python benchmarks/append_anatomy.py              # ~10 s; prints three tables
    python benchmarks/append_anatomy.py --durability full
    python benchmarks/append_anatomy.py --batch 100   # frames of a call of 100 messages

Counts, so that a loaded machine does not move them: the SQL statements one append runs
(sqlite3's trace callback on the store's writer connection: the event's INSERT shows twice,
the second its version fence, a trigger), and the WAL frames its commit writes, by the
B-tree each page belongs to (the frames' page numbers in the `-wal` file, named by SQLite's
`dbstat` table just before; a page the append allocated is "new", named by `dbstat` just
after). With `--batch N`, the frames of a call of N messages (bulk appends). Then the process
CPU time of an append (no wait for the disk counted), beside a plain sqlite3 INSERT +
COMMIT of the same JSON row (`append.py`'s baseline): the CPU is what `synchronous=NORMAL`
leaves of an append's time.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import struct
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from append import Baseline

from transcripts import TranscriptStore

WAL_HEADER, FRAME_HEADER = 32, 24  # bytes (SQLite's WAL format)


def statements(store: TranscriptStore, message: dict[str, Any]) -> list[str]:
    """The statements of one append, as the writer connection ran them."""
    pool = store._log.recorder.datastore.pool  # type: ignore[attr-defined]
    connection = pool.get_connection(is_writer=True)
    raw = connection._sqlite_conn
    pool.put_connection(connection)
    traced: list[str] = []
    raw.set_trace_callback(traced.append)
    try:
        store.append("anatomy", [message])
    finally:
        raw.set_trace_callback(None)
    return traced


def frames(path: Path, append: Any, appends: int) -> tuple[Counter[str], int]:
    """WAL frames per append by B-tree, over `appends` appends each after a checkpoint."""
    side = sqlite3.connect(path, isolation_level=None)
    counted: Counter[str] = Counter()
    for _ in range(appends):
        side.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        names = dict(side.execute("SELECT pageno, name FROM dbstat"))
        append()
        new = dict(side.execute("SELECT pageno, name FROM dbstat"))
        data = Path(f"{path}-wal").read_bytes()
        size = struct.unpack(">I", data[8:12])[0]
        for offset in range(WAL_HEADER, len(data) - FRAME_HEADER + 1, FRAME_HEADER + size):
            page = struct.unpack(">I", data[offset : offset + 4])[0]
            counted[names[page] if page in names else f"new: {new.get(page)}"] += 1
    side.close()
    return counted, appends


def cpu_per_call(call: Any, calls: int, rounds: int) -> float:
    """Median process CPU µs of one call, over rounds of `calls` calls."""
    results = []
    for _ in range(rounds):
        start = time.process_time_ns()
        for _ in range(calls):
            call()
        results.append((time.process_time_ns() - start) / calls / 1000)
    return statistics.median(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--durability", choices=("normal", "full"), default="normal")
    parser.add_argument("--history", type=int, default=300, help="messages before counting")
    parser.add_argument("--calls", type=int, default=300, help="appends per CPU round")
    parser.add_argument("--rounds", type=int, default=7, help="CPU rounds")
    parser.add_argument("--batch", type=int, default=0, help="count frames of a call of N")
    args = parser.parse_args()
    message = {"role": "user", "content": "x" * 400}
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory, "store.db")
        store = TranscriptStore.open(f"sqlite:///{path}", durability=args.durability)
        store.start("anatomy")
        for _ in range(args.history):
            store.append("anatomy", [message])

        traced = statements(store, message)
        print(f"statements of one append: {len(traced)}")
        for statement in traced:
            print(f"  {statement[:100]}")

        counted, appends = frames(path, lambda: store.append("anatomy", [message]), 20)
        print(f"\nWAL frames per append: {sum(counted.values()) / appends:.2f}")
        for name, count in counted.most_common():
            print(f"  {count / appends:5.2f}  {name}")

        plain = Baseline(Path(directory, "plain.db"), args.history, message, "NORMAL")
        plain_frames, _ = frames(Path(directory, "plain.db"), lambda: plain.append(message), 20)
        print(f"plain INSERT + COMMIT: {sum(plain_frames.values()) / 20:.2f} frames")

        if args.batch:
            call = [message] * args.batch  # the store gives each its own id
            counted, calls = frames(path, lambda: store.append("anatomy", call), 20)
            print(f"\nWAL frames per call of {args.batch}: {sum(counted.values()) / calls:.2f}")
            for name, count in counted.most_common():
                print(f"  {count / calls:6.2f}  {name}")

        ours = cpu_per_call(lambda: store.append("anatomy", [message]), args.calls, args.rounds)
        floor = cpu_per_call(lambda: plain.append(message), args.calls, args.rounds)
        print(f"\nCPU per append: {ours:.0f} µs; plain INSERT + COMMIT {floor:.0f} µs")
        plain.close()
        store.close()


if __name__ == "__main__":
    main()
