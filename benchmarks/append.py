"""Append benchmark: what one `store.append(session, [message])` costs, as ratios.

    python benchmarks/append.py            # ~15 s; prints a table
    python benchmarks/append.py --check    # exit 1 if a target is missed
    python benchmarks/append.py --help

Measured in one run, interleaved in rounds (the order of the variants is shuffled every
round, and rounds are short) so that a noisy machine affects every variant alike; each
ratio is the median of the per-round ratios of per-round medians:

  (a) `store.append(session, [one message])` on a SQLite file store, vs a plain sqlite3
      INSERT of the same JSON row (the orjson-encoded message with a fresh id) in its own
      transaction, in WAL mode with `synchronous=FULL`: the durability the store runs at.
      Target <= 1.5.
  (b) the same append to a session that already holds `--history` (10,000) messages, vs a
      fresh session (a new one every round, so it holds at most `--batch` messages).
      Target <= 1.2.

The baseline table has the shape of the library's `stored_events` table (a text key, an
integer sequence number, a BLOB; a rowid table with a composite primary key) and is
pre-filled with as many rows as the store holds, so both B-trees are about as deep.

Rows marked "info" are context, not targets: the same append on `memory://` (the cost
without a disk), the first append after reopening the file (the aggregate cache is cold,
the session's events are replayed), and the overhead of (a) in µs. The ratio (a) depends
on the disk: the slower its fsync, the more the constant cost of the commit hides the
store's own work, so read the overhead in µs beside it.

Every database lives in one directory (`--dir`, default a new temporary directory that is
removed afterwards): put it on the disk you care about. On tmpfs fsync costs nothing and
the ratios say little about a real disk.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import platform
import pstats
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import uuid4

import orjson
from harness import (
    filesystem_of,
    make_message,
    micros,
    package_version,
    quartiles,
    round_ratios,
    run_in_scratch_directory,
    timed,
)
from transcripts import TranscriptStore

TARGET_VS_SQLITE = 1.5
TARGET_HISTORY = 1.2

SQLITE = "sqlite3 INSERT+COMMIT"
FRESH = "append, fresh session"
LONG = "append, {history:,} history"
MEMORY = "append, memory:// (info)"
NOISY_IQR = 0.25  # an interquartile range of the per-round ratios wider than this: say so


# -- the variants ---------------------------------------------------------------------------


class Baseline:
    """What an application would do by hand: one JSON row per message, one transaction each."""

    def __init__(self, path: Path, prefill: int, message: dict[str, Any]) -> None:
        self.connection = sqlite3.connect(path, isolation_level=None)  # explicit BEGIN/COMMIT
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute("PRAGMA synchronous=FULL")
        self.connection.execute(
            "CREATE TABLE messages (session_id TEXT NOT NULL, seq INTEGER NOT NULL, "
            "body BLOB NOT NULL, PRIMARY KEY (session_id, seq))"
        )
        rows = (
            ("prefill", n, orjson.dumps({"id": f"msg_{uuid4().hex}", **message}))
            for n in range(prefill)
        )
        with self.connection:
            self.connection.execute("BEGIN")
            self.connection.executemany("INSERT INTO messages VALUES (?, ?, ?)", rows)
        self.session = f"s_{uuid4().hex}"
        self.seq = 0

    def append(self, message: dict[str, Any]) -> None:
        self.seq += 1
        body = orjson.dumps({"id": f"msg_{uuid4().hex}", **message})
        cursor = self.connection.cursor()
        cursor.execute("BEGIN")
        cursor.execute("INSERT INTO messages VALUES (?, ?, ?)", (self.session, self.seq, body))
        cursor.execute("COMMIT")

    def synchronous(self) -> str:
        return _synchronous_name(self.connection.execute("PRAGMA synchronous").fetchone()[0])

    def close(self) -> None:
        self.connection.close()


def store_synchronous(store: TranscriptStore) -> str:
    """The `synchronous` level of the store's writer connection (private API: best effort)."""
    try:
        pool = store._log.recorder.datastore.pool  # type: ignore[attr-defined]
        connection = pool.get_connection(is_writer=True)
        try:
            level = connection._sqlite_conn.execute("PRAGMA synchronous").fetchone()[0]
        finally:
            pool.put_connection(connection)
    except Exception:  # noqa: BLE001 - internals moved; the figure is only informative
        return "unknown"
    return _synchronous_name(level)


def _synchronous_name(level: int) -> str:
    return {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(level, str(level))


def seed(store: TranscriptStore, session: str, count: int, chars: int, chunk: int = 500) -> None:
    store.start(session, source="benchmark")
    for first in range(0, count, chunk):
        store.append(
            session, [make_message(chars, n) for n in range(first, min(count, first + chunk))]
        )


# -- measuring ------------------------------------------------------------------------------


def run_rounds(
    variants: dict[str, Callable[[], Callable[[], object]]],
    rounds: int,
    batch: int,
    rng: random.Random,
) -> dict[str, list[list[float]]]:
    """Per variant, per round, the seconds of each of `batch` calls.

    `variants` maps a name to a per-round setup that returns the call to time (setup is
    not timed). The order of the variants is shuffled every round.
    """
    samples: dict[str, list[list[float]]] = {name: [] for name in variants}
    names = list(variants)
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            call = variants[name]()
            samples[name].append(timed(call, batch))
    return samples


def spread(values: list[float]) -> float:
    low, high = quartiles(values)
    return high - low


def cold_appends(url: str, session: str, repeats: int, message: dict[str, Any]) -> list[float]:
    """The first append after opening the store: the session's events are replayed."""
    samples = []
    for _ in range(repeats):
        with TranscriptStore.open(url) as store:
            started = time.perf_counter()
            store.append(session, [message])
            samples.append(time.perf_counter() - started)
    return samples


def profile(
    store: TranscriptStore, session: str, message: dict[str, Any], calls: int, top: int
) -> None:
    for _ in range(50):
        store.append(session, [message])
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        store.append(session, [message])
    profiler.disable()
    print(f"\ncProfile of {calls:,} appends to {session!r} (times include profiler overhead)")
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


# -- reporting ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog="Targets: (a) <= 1.5, (b) <= 1.2."
    )
    parser.add_argument("--rounds", type=int, default=150, help="interleaved rounds (default 150)")
    parser.add_argument(
        "--batch", type=int, default=10, help="appends per variant per round (default 10)"
    )
    parser.add_argument(
        "--history",
        type=int,
        default=10_000,
        help="messages already in the long session (default 10000)",
    )
    parser.add_argument(
        "--chars", type=int, default=400, help="characters of content per message (default 400)"
    )
    parser.add_argument(
        "--warmup", type=int, default=100, help="untimed appends per variant first (default 100)"
    )
    parser.add_argument(
        "--cold",
        type=int,
        default=3,
        help="cold first-append repeats per session, 0 to skip (default 3)",
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the memory:// info row")
    parser.add_argument(
        "--dir", type=Path, help="directory for the databases (default: a new temporary one)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the databases afterwards")
    parser.add_argument("--seed", type=int, default=None, help="seed for the round order")
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="then cProfile N appends (fresh session)",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.batch < 1 or args.history < 0:
        parser.error("--rounds and --batch must be >= 1, --history >= 0")

    return run_in_scratch_directory(args, run)


def run(args: argparse.Namespace, directory: Path) -> int:
    rng = random.Random(args.seed)
    message = make_message(args.chars, 1)
    url = f"sqlite:///{directory / 'store.db'}"
    long_name = LONG.format(history=args.history)

    started = time.perf_counter()
    store = TranscriptStore.open(url)
    memory = None if args.no_memory else TranscriptStore.open("memory://")
    baseline = Baseline(directory / "baseline.db", args.history, message)
    try:
        seed(store, "long", args.history, args.chars)
        seeded = time.perf_counter() - started

        fresh_count = 0

        def fresh_session(target: TranscriptStore) -> Callable[[], object]:
            nonlocal fresh_count
            fresh_count += 1
            session = f"fresh-{fresh_count}"
            target.start(session, source="benchmark")
            return lambda: target.append(session, [message])

        variants: dict[str, Callable[[], Callable[[], object]]] = {
            SQLITE: lambda: lambda: baseline.append(message),
            FRESH: lambda: fresh_session(store),
            long_name: lambda: lambda: store.append("long", [message]),
        }
        if memory is not None:
            variants[MEMORY] = lambda: fresh_session(memory)

        for setup in variants.values():
            timed(setup(), args.warmup)
        gc.collect()
        samples = run_rounds(variants, args.rounds, args.batch, rng)
        measured = time.perf_counter() - started - seeded

        print_header(
            args,
            directory,
            baseline.synchronous(),
            store_synchronous(store),
            package_version("eventsourcing"),
        )
        ratio_a = round_ratios(samples, FRESH, SQLITE)
        ratio_b = round_ratios(samples, long_name, FRESH)
        print(f"{'variant':34} {'median µs/append':>17} {'p90':>8}")
        for name, rounds in samples.items():
            flat = [s for r in rounds for s in r]
            p90 = statistics.quantiles(flat, n=10)[-1]
            print(f"{name:34} {micros(statistics.median(flat)):>17} {micros(p90):>8}")

        cold: dict[str, list[float]] = {}
        if args.cold > 0:
            store.close()
            cold["first append after reopen, fresh (info)"] = cold_appends(
                url, "fresh-1", args.cold, message
            )
            cold[f"first append after reopen, {args.history:,} (info)"] = cold_appends(
                url, "long", args.cold, message
            )
            store = TranscriptStore.open(url)
            for name, values in cold.items():
                print(f"{name:34} {micros(statistics.median(values)):>17}")

        print()
        missed = []
        print(f"{'ratio':34} {'median':>8} {'IQR of rounds':>15} {'target':>8}")
        for label, ratios, target in (
            ("(a) fresh append / sqlite3", ratio_a, TARGET_VS_SQLITE),
            (f"(b) {args.history:,} history / fresh", ratio_b, TARGET_HISTORY),
        ):
            value = statistics.median(ratios)
            low, high = quartiles(ratios)
            verdict = "ok" if value <= target else "MISSED"
            if value > target:
                missed.append(label)
            print(
                f"{label:34} {value:8.2f} {f'{low:.2f}–{high:.2f}':>15} {f'<= {target}':>8}  {verdict}"
            )
        overhead = [
            statistics.median(a) - statistics.median(b)
            for a, b in zip(samples[FRESH], samples[SQLITE], strict=True)
        ]
        low, high = quartiles(overhead)
        print(
            f"{'(a) overhead, µs per append':34} {micros(statistics.median(overhead)):>8} "
            f"{f'{micros(low)}–{micros(high)}':>15} {'info':>8}"
        )
        if any(spread(ratios) > NOISY_IQR for ratios in (ratio_a, ratio_b)):
            print(
                "warning: the rounds disagree (wide IQR): the machine is busy; rerun, or raise --rounds"
            )
        total = time.perf_counter() - started
        print(
            f"\n{args.rounds} rounds x {args.batch} appends per variant; seeding {seeded:.1f} s, "
            f"rounds {measured:.1f} s, total {total:.1f} s"
        )

        if args.profile:
            session = "profiled"
            store.start(session, source="benchmark")
            profile(store, session, message, args.profile, 30)
    finally:
        baseline.close()
        store.close()
        if memory is not None:
            memory.close()

    if missed and args.check:
        print(f"target missed: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


def print_header(
    args: argparse.Namespace, directory: Path, base_sync: str, store_sync: str, es_version: str
) -> None:
    print(
        f"transcript-store append benchmark — Python {platform.python_version()}, "
        f"eventsourcing {es_version}, SQLite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs"
    )
    filesystem = filesystem_of(directory)
    print(
        f"databases in {directory} ({filesystem}); synchronous: store {store_sync}, "
        f"baseline {base_sync}; message ~{args.chars} chars, no id given"
    )
    if filesystem in {"tmpfs", "ramfs"}:
        print(
            "warning: the databases are on a RAM filesystem, fsync is free: use --dir on a real disk"
        )
    print()


if __name__ == "__main__":
    sys.exit(main())
