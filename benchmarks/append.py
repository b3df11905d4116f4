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
      Target <= 1.5. With `--durability normal`, both at `synchronous=NORMAL` (the store's
      durability "normal"): target <= 3, since the Python around the commit weighs more
      once the commit does not wait for the disk.
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
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import uuid4

import harness
import orjson

from transcripts import TranscriptStore

TARGET_VS_SQLITE = {"full": 1.5, "normal": 3.0}  # by durability
TARGET_HISTORY = 1.2

SQLITE = "sqlite3 INSERT+COMMIT"
SEARCHED = "sqlite3 INSERT+FTS5+COMMIT (info)"
FRESH = "append, fresh session"
LONG = "append, {history:,} history"
MEMORY = "append, memory:// (info)"


# -- the variants ---------------------------------------------------------------------------


class Baseline:
    """What an application would do by hand: one JSON row per message, one transaction each;
    with `search`, also the message's text in an FTS5 index defined as the store's."""

    def __init__(
        self,
        path: Path,
        prefill: int,
        message: dict[str, Any],
        synchronous: str = "FULL",
        *,
        search: bool = False,
    ) -> None:
        self.connection = sqlite3.connect(path, isolation_level=None)  # explicit BEGIN/COMMIT
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute(f"PRAGMA synchronous={synchronous}")
        self.connection.execute(
            "CREATE TABLE messages (session_id TEXT NOT NULL, seq INTEGER NOT NULL, "
            "body BLOB NOT NULL, PRIMARY KEY (session_id, seq))"
        )
        self.search = search
        if search:
            self.connection.execute(
                "CREATE VIRTUAL TABLE search USING fts5(text, session_id UNINDEXED, "
                "message_id UNINDEXED, tokenize = 'porter unicode61')"
            )
        rows = (
            ("prefill", n, orjson.dumps({"id": f"msg_{uuid4().hex}", **message}))
            for n in range(prefill)
        )
        with self.connection:
            self.connection.execute("BEGIN")
            for row in rows:
                self._insert(self.connection.cursor(), *row)
        self.session = f"s_{uuid4().hex}"
        self.seq = 0

    def append(self, message: dict[str, Any]) -> None:
        """One message: one INSERT (and its index entry) in its own transaction."""
        self.seq += 1
        body = orjson.dumps({"id": f"msg_{uuid4().hex}", **message})
        cursor = self.connection.cursor()
        cursor.execute("BEGIN")
        self._insert(cursor, self.session, self.seq, body)
        cursor.execute("COMMIT")

    def _insert(self, cursor: sqlite3.Cursor, session: str, seq: int, body: bytes) -> None:
        cursor.execute("INSERT INTO messages VALUES (?, ?, ?)", (session, seq, body))
        if self.search:
            message = orjson.loads(body)
            cursor.execute(
                "INSERT INTO search (rowid, text, session_id, message_id) VALUES (?, ?, ?, ?)",
                (cursor.lastrowid, message["content"], session, message["id"]),
            )

    def synchronous(self) -> str:
        """The baseline connection's `synchronous` level."""
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
    """SQLite's name of a `PRAGMA synchronous` level."""
    return {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(level, str(level))


def seed(store: TranscriptStore, session: str, count: int, chars: int, chunk: int = 500) -> None:
    """Start `session` and append `count` messages to it, `chunk` per call."""
    store.start(session, source="benchmark")
    for first in range(0, count, chunk):
        store.append(
            session,
            [harness.make_message(chars, n) for n in range(first, min(count, first + chunk))],
        )


# -- measuring ------------------------------------------------------------------------------


def append_variants(
    store: TranscriptStore,
    memory: TranscriptStore | None,
    baseline: Baseline,
    searched: Baseline,
    message: dict[str, Any],
    history: int,
) -> dict[str, harness.Setup]:
    """The variants, as per-round setups; a fresh session is started for each round.

    Fresh sessions are numbered in the order their setups run: the warm-up of FRESH runs
    first, so "fresh-1" is a session of the file store (the cold append reopens it).
    """
    fresh_count = 0

    def fresh_session(target: TranscriptStore) -> harness.Setup:
        def setup() -> Callable[[], object]:
            nonlocal fresh_count
            fresh_count += 1
            session = f"fresh-{fresh_count}"
            target.start(session, source="benchmark")
            return lambda: target.append(session, [message])

        return setup

    variants: dict[str, harness.Setup] = {
        SQLITE: harness.same_call(lambda: baseline.append(message)),
        SEARCHED: harness.same_call(lambda: searched.append(message)),
        FRESH: fresh_session(store),
        LONG.format(history=history): harness.same_call(lambda: store.append("long", [message])),
    }
    if memory is not None:
        variants[MEMORY] = fresh_session(memory)
    return variants


def cold_appends(url: str, session: str, repeats: int, message: dict[str, Any]) -> list[float]:
    """The first append after opening the store: the session's events are replayed."""
    samples = []
    for _ in range(repeats):
        with TranscriptStore.open(url) as store:
            started = time.perf_counter()
            store.append(session, [message])
            samples.append(time.perf_counter() - started)
    return samples


def profile_appends(store: TranscriptStore, message: dict[str, Any], calls: int) -> None:
    """cProfile `calls` appends to a fresh session, after 50 untimed ones."""
    session = "profiled"
    store.start(session, source="benchmark")
    for _ in range(50):
        store.append(session, [message])

    def appends() -> None:
        for _ in range(calls):
            store.append(session, [message])

    harness.profile(f"{calls:,} appends to {session!r}", appends, 30)


# -- reporting ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Parse the options; run in a scratch directory."""
    parser = harness.new_parser(
        __doc__, epilog="Targets: (a) <= 1.5 (<= 3 at --durability normal), (b) <= 1.2."
    )
    harness.add_round_options(parser, rounds=150, batch=10, calls="appends")
    harness.add_count(parser, "--history", 10_000, "messages already in the long session")
    harness.add_chars_option(parser, 400)
    harness.add_count(parser, "--warmup", 100, "untimed appends per variant first")
    harness.add_count(parser, "--cold", 3, "cold first-append repeats per session, 0 to skip")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory:// info row")
    parser.add_argument(
        "--durability",
        choices=["full", "normal"],
        default="full",
        help="the store's durability, and the baseline's synchronous level (default full)",
    )
    harness.add_scratch_options(parser)
    harness.add_seed_option(parser)
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="then cProfile N appends (fresh session)",
    )
    harness.add_check_option(parser)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.batch < 1 or args.history < 0:
        parser.error("--rounds and --batch must be >= 1, --history >= 0")

    return harness.run_in_scratch_directory(args, run)


def run(args: argparse.Namespace, directory: Path) -> int:
    """Seed, time the variants in interleaved rounds, print the tables; the exit code."""
    rng = random.Random(args.seed)
    message = harness.make_message(args.chars, 1)
    url = f"sqlite:///{directory / 'store.db'}"

    started = time.perf_counter()
    store = TranscriptStore.open(url, durability=args.durability)
    memory = None if args.no_memory else TranscriptStore.open("memory://")
    synchronous = args.durability.upper()
    baseline = Baseline(directory / "baseline.db", args.history, message, synchronous)
    searched = Baseline(directory / "searched.db", args.history, message, synchronous, search=True)
    try:
        seed(store, "long", args.history, args.chars)
        seeded = time.perf_counter() - started
        variants = append_variants(store, memory, baseline, searched, message, args.history)
        harness.warm_up(variants, args.warmup)
        samples = harness.run_rounds(variants, args.rounds, args.batch, rng)
        measured = time.perf_counter() - started - seeded

        print_header(args, directory, baseline.synchronous(), store_synchronous(store))
        table = harness.TimingTable(34, 17)
        table.header("variant", "median µs/append")
        table.rows(samples)
        if args.cold > 0:
            store.close()
            print_cold(table, url, args, message)
            store = TranscriptStore.open(url, durability=args.durability)

        print()
        verdicts = judge(samples, args.history, TARGET_VS_SQLITE[args.durability])
        verdicts.warn_if_noisy("rerun, or raise --rounds")
        total = time.perf_counter() - started
        print(
            f"\n{args.rounds} rounds x {args.batch} appends per variant; seeding {seeded:.1f} s, "
            f"rounds {measured:.1f} s, total {total:.1f} s"
        )
        if args.profile:
            profile_appends(store, message, args.profile)
    finally:
        baseline.close()
        searched.close()
        store.close()
        if memory is not None:
            memory.close()
    return verdicts.exit_code(args.check)


def print_header(
    args: argparse.Namespace, directory: Path, base_sync: str, store_sync: str
) -> None:
    """Versions, where the databases are, their synchronous levels, the message size."""
    print(harness.title("append", ["eventsourcing"]))
    harness.print_directory(
        directory,
        f"synchronous: store {store_sync}, baseline {base_sync}; "
        f"message ~{args.chars} chars, no id given",
    )
    print()


def print_cold(
    table: harness.TimingTable, url: str, args: argparse.Namespace, message: dict[str, Any]
) -> None:
    """The first append after reopening the (closed) store, to a fresh and the long session."""
    for session, label in (("fresh-1", "fresh"), ("long", f"{args.history:,}")):
        samples = cold_appends(url, session, args.cold, message)
        table.row(f"first append after reopen, {label} (info)", samples, p90=False)


def judge(samples: harness.Samples, history: int, target_a: float) -> harness.Verdicts:
    """The ratios (a) and (b) against their targets, and the overhead of (a) in µs."""
    verdicts = harness.Verdicts(heading="ratio", widths=(34, 8, 15, 8))
    ratio_a = harness.round_ratios(samples, FRESH, SQLITE)
    verdicts.ratio("(a) fresh append / sqlite3", ratio_a, target_a, at_most=True)
    ratio_b = harness.round_ratios(samples, LONG.format(history=history), FRESH)
    verdicts.ratio(f"(b) {history:,} history / fresh", ratio_b, TARGET_HISTORY, at_most=True)
    overhead = harness.round_differences(samples, FRESH, SQLITE)
    low, high = harness.quartiles(overhead)
    median = statistics.median(overhead)
    shown, spread = harness.micros(median), f"{harness.micros(low)}–{harness.micros(high)}"
    verdicts.line("(a) overhead, µs per append", shown, spread, median, None, at_most=True)
    # What the search index alone costs a plain program: the views must hold it on return.
    searched = harness.round_ratios(samples, SEARCHED, SQLITE)
    verdicts.ratio("sqlite3 + FTS5 / sqlite3", searched, None, at_most=True)
    to_searched = harness.round_ratios(samples, FRESH, SEARCHED)
    verdicts.ratio("fresh append / sqlite3 + FTS5", to_searched, None, at_most=True)
    return verdicts


if __name__ == "__main__":
    sys.exit(main())
