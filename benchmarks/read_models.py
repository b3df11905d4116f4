"""Read-model benchmark: what reading the views and rebuilding them cost, as ratios.

    python benchmarks/read_models.py                    # ~1.5 min; prints a table
    python benchmarks/read_models.py --check            # exit 1 if a target is missed
    python benchmarks/read_models.py --events 1000000 --rebuild-rounds 1 --store big.db
                                                        # the 1M run: ~2 min to build, ~3 to run
    python benchmarks/read_models.py --help

Measured in one run; the variants of each comparison are interleaved in rounds (their order
shuffled every round) and each ratio is the median of the per-round ratios:

  (a) `store.active(session)` of a session with `--history` (10,000) messages of history of
      which `--active` (50) are active (compacted after every `--chunk` (500) appended
      messages, keeping the last 49 and adding a summary), vs the same call on a session that holds
      50 messages in all. Both in one SQLite store, every message the same size. Target <= 1.2.
  (b) the same `active()` vs a plain sqlite3 `SELECT message FROM t WHERE session_id = ?
      ORDER BY position` plus `orjson.loads` of each of the 50 rows, from a mutable-rows table
      (a rowid table keyed by (session_id, position): the conventional design, where a
      compaction deletes rows) in its own SQLite file (WAL), holding the same JSON texts as
      the store's `active_messages` table (every session of it). Target <= 1.5.
  (c) `store.rebuild_projections()` over a store of `--events` (100,000) events, in events/s,
      vs a plain sqlite3 program that writes the same rows: it streams the same event rows
      in transactions of as many events as the rebuild takes (1,000), decodes each payload
      with `orjson.loads`, and `executemany`s the view rows (message JSON re-encoded) into
      copies of the views' tables made from their DDL as it is in the file (same keys,
      indexes and triggers), with the supersede and placing updates of compactions, each
      history row with the log position of the event that added it. Neither writes the
      full-text index: a rebuild swaps in an empty one, which the first search fills. Both
      write into the store's file. Target: rebuild / plain >= 0.8 (throughput); the events/s
      are shown as info (the 100,000 events/s target is retired: the plain program does
      about a tenth of it on this hardware).
      An "INSERT ... SELECT" of the raw event rows (no decoding: the floor) is shown as info.
  (d) peak RSS of a fresh process that opens the store and rebuilds it (a subprocess: VmRSS
      after opening, then VmHWM, the high-water mark, reset before the rebuild where Linux
      allows, and VmRSS at every progress call). Target <= 150 MB for 1,000,000 events; with
      fewer events the figure is shown as info and not judged. The same subprocess reports
      how long the rebuild holds the write lock after its last progress call (the final
      batches and the table swap: writers wait) and the size of the WAL file it leaves.

The rebuild store is built through the public API: sessions of `--session-messages` (1,000)
messages appended `--chunk` (500) per call, a committed compaction after each chunk (a summary
plus the last 19 messages stay active) and a failed one in every 4th session. Building 1M
events takes about 2 minutes: `--store PATH` keeps the store and reuses it, as it is, next time.
`--profile` then prints a cProfile of one rebuild and of `active()` calls.

The plain sqlite3 baselines of (b) and (c) are in plain_sqlite.py; what the subprocess of (d)
does and measures is in rebuild_memory.py.
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

import harness
from plain_sqlite import MutableRows, PlainCopy, active_rows
from rebuild_memory import RebuildMemory, measure_rss, rss_child

from transcripts import TranscriptStore

TARGET_ACTIVE_HISTORY = 1.2
TARGET_ACTIVE_SQLITE = 1.5
TARGET_REBUILD_RATIO = 0.8
TARGET_RSS_MB = 150
RSS_TARGET_EVENTS = 1_000_000

LONG = "active(), {history:,} history"
SHORT = "active(), {active} in all"
PLAIN = "sqlite3 SELECT + orjson.loads"
REBUILD = "store.rebuild_projections()"
COPY = "plain sqlite3 decode + executemany"
FLOOR = "sqlite3 INSERT...SELECT (info)"


# -- data -----------------------------------------------------------------------------------


def keep_last(count: int, chars: int) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    """A summarize function: one summary (the size of a message), then the last `count - 1`."""

    def summarize(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [harness.make_message(chars, 0), *messages[len(messages) - (count - 1) :]]

    return summarize


def seed_long_session(
    store: TranscriptStore, session: str, history: int, active: int, chars: int, chunk: int
) -> None:
    """`history` messages appended `chunk` per call, compacted to `active` after each call."""
    store.start(session, source="benchmark")
    for first in range(0, history, chunk):
        store.append(
            session,
            [harness.make_message(chars, n) for n in range(first, min(history, first + chunk))],
        )
        result = store.compact(session, keep_last(active, chars), reason="benchmark")
        if not result.committed:
            raise RuntimeError(f"compaction failed while seeding: {result.failure}: {result.error}")


def build_store(
    store: TranscriptStore, events: int, session_messages: int, chunk: int, chars: int, keep: int
) -> int:
    """Sessions of realistic size until the log holds at least `events` events; return the count."""
    written = 0
    session = 0
    while written < events:
        name = f"s{session:06d}"
        store.start(name, source="benchmark", model="bench-model", metadata={"n": session})
        written += 1
        if session % 4 == 3:
            store.fail_compaction(store.begin_compaction(name), "benchmark: a failed attempt")
            written += 1
        appended = 0
        while appended < session_messages and written < events:
            count = min(chunk, session_messages - appended, events - written)
            store.append(name, [harness.make_message(chars, appended + n) for n in range(count)])
            appended += count
            written += count
            if written < events and appended >= keep:
                result = store.compact(name, keep_last(keep, chars), reason="benchmark")
                if not result.committed:
                    raise RuntimeError(f"compaction failed while building: {result.failure}")
                written += 1
        session += 1
    return written


def log_size(path: Path) -> int:
    """Events in the store file at `path`; 0 if there is none yet."""
    if not path.exists():
        return 0
    with sqlite3.connect(path) as connection:
        try:
            return connection.execute("SELECT COUNT(*) FROM stored_events").fetchone()[0]
        except sqlite3.OperationalError:  # not a store (yet)
            return 0


# -- the two parts --------------------------------------------------------------------------


def measure_reads(
    args: argparse.Namespace, directory: Path, rng: random.Random
) -> tuple[harness.Samples, str, str]:
    """(a), (b): the rounds of active() calls; return the samples and the two store variants."""
    read_path = directory / "read.db"
    store = TranscriptStore.open(f"sqlite:///{read_path}")
    plain: MutableRows | None = None
    try:
        seed_long_session(store, "long", args.history, args.active, args.chars, args.chunk)
        store.start("short", source="benchmark")
        store.append("short", [harness.make_message(args.chars, n) for n in range(args.active)])
        assert len(store.active("long")) == len(store.active("short")) == args.active
        plain = MutableRows(directory / "plain.db", active_rows(read_path))
        assert plain.read("long") == store.active("long")
        history = next(row["messages"] for row in store.sessions() if row["id"] == "long")
        long_name, short_name = LONG.format(history=history), SHORT.format(active=args.active)
        reads: dict[str, harness.Setup] = {
            long_name: harness.same_call(lambda: store.active("long")),
            short_name: harness.same_call(lambda: store.active("short")),
            PLAIN: harness.same_call(lambda: plain.read("long")),  # type: ignore[union-attr]
        }
        harness.warm_up(reads, 200)
        samples = harness.run_rounds(reads, args.rounds, args.batch, rng)
        if args.profile:
            calls = lambda: [store.active("long") for _ in range(1000)]  # noqa: E731
            harness.profile("1,000 store.active('long')", calls, 25)
    finally:
        store.close()
        if plain is not None:
            plain.close()
    return samples, long_name, short_name


def measure_rebuilds(
    args: argparse.Namespace, path: Path, rng: random.Random
) -> tuple[harness.Samples, int, str, dict[str, tuple[int, int]]]:
    """(c): build (or reuse) the store, then rounds of rebuild, plain copy and floor."""
    started = time.perf_counter()
    events = log_size(path)
    store = TranscriptStore.open(f"sqlite:///{path}")
    if events:
        built = f"reused {path} ({events:,} events)"
    else:
        events = build_store(store, args.events, args.session_messages, args.chunk, args.chars, 20)
        built = f"built in {time.perf_counter() - started:.1f} s"
    store.catch_up_projections()  # views may be caught up lazily: count them caught up
    copier = PlainCopy(path)
    replayed: list[int] = []
    try:
        copier.reset()
        copier.copy()  # warms the OS cache for every variant, and checks the copy
        counts = copier.counts()
        variants: dict[str, harness.Setup] = {
            REBUILD: harness.same_call(lambda: replayed.append(store.rebuild_projections())),
            COPY: harness.same_call(copier.copy),
            FLOOR: harness.same_call(copier.insert_select),
        }
        samples = harness.run_rounds(variants, args.rebuild_rounds, 1, rng, between=copier.reset)
        copier.drop()
        if args.profile:
            harness.profile(f"one rebuild of {events:,} events", store.rebuild_projections, 30)
    finally:
        copier.close()
        store.close()
    if any(count != events for count in replayed):
        print(f"warning: the rebuilds replayed {replayed} events, not {events:,}")
    return samples, events, built, counts


# -- main -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Parse the options; run in a scratch directory (or be the RSS subprocess)."""
    parser = harness.new_parser(
        __doc__,
        epilog="Targets: (a) <= 1.2, (b) <= 1.5, (c) >= 0.8, (d) <= 150 MB at 1M events.",
    )
    harness.add_count(parser, "--history", 10_000, "messages of the long session")
    harness.add_count(parser, "--active", 50, "active messages of both sessions")
    harness.add_chars_option(parser, 400)
    harness.add_round_options(parser, rounds=200, batch=20, calls="active() calls")
    harness.add_count(parser, "--events", 100_000, "events in the rebuild store")
    harness.add_count(parser, "--session-messages", 1000, "messages per session there")
    harness.add_count(parser, "--chunk", 500, "messages per append call when building")
    harness.add_count(parser, "--rebuild-rounds", 5, "interleaved rebuild rounds")
    parser.add_argument("--no-rss", action="store_true", help="skip (d), the peak RSS subprocess")
    parser.add_argument(
        "--store", type=Path, help="rebuild store file to build once and reuse (kept)"
    )
    harness.add_scratch_options(parser)
    harness.add_seed_option(parser)
    parser.add_argument(
        "--profile",
        action="store_true",
        help="then cProfile one rebuild and 1,000 active() calls",
    )
    harness.add_check_option(parser)
    parser.add_argument("--rss-child", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rss_child:
        rss_child(args.rss_child)
        return 0
    if (
        min(args.rounds, args.batch, args.rebuild_rounds, args.chunk, args.events) < 1
        or args.active < 2
    ):
        parser.error("sizes must be >= 1 (--active >= 2)")
    if args.history < args.active or args.session_messages < 20:
        parser.error("--history must be >= --active, --session-messages >= 20")

    return harness.run_in_scratch_directory(args, run)


def run(args: argparse.Namespace, directory: Path) -> int:
    """The active() part, the rebuild part and the RSS subprocess; print; the exit code."""
    rng = random.Random(args.seed)
    started = time.perf_counter()
    print_header(args, directory)
    read_samples, long_name, short_name = measure_reads(args, directory, rng)
    reads_done = time.perf_counter()
    path = (args.store or directory / "rebuild.db").resolve()
    rebuild_samples, events, built, counts = measure_rebuilds(args, path, rng)
    rss = None if args.no_rss else measure_rss(path, __file__)

    print()
    table = harness.TimingTable(44, 14)
    table.header("active() variant", "median µs/call")
    table.rows(read_samples)
    print_rebuilds(rebuild_samples, events)
    print("rows, view/copy: " + ", ".join(f"{v} {a:,}/{b:,}" for v, (a, b) in counts.items()))
    if rss is not None:
        print_rss(rss)

    print()
    verdicts = harness.Verdicts()
    judge_reads(verdicts, args, read_samples, long_name, short_name)
    judge_rebuilds(verdicts, rebuild_samples, events)
    if rss is not None:
        judge_rss(verdicts, rss)
    verdicts.warn_if_noisy("rerun or add rounds")
    print(
        f"\nactive() part {reads_done - started:.1f} s ({args.rounds} rounds x {args.batch}); "
        f"rebuild store {built}; {args.rebuild_rounds} rebuild rounds; "
        f"total {time.perf_counter() - started:.1f} s"
    )
    return verdicts.exit_code(args.check)


def judge_reads(
    verdicts: harness.Verdicts,
    args: argparse.Namespace,
    samples: harness.Samples,
    long_name: str,
    short_name: str,
) -> None:
    """(a) and (b): the long session's active() vs the short one's, and vs plain sqlite3."""
    history_ratios = harness.round_ratios(samples, long_name, short_name)
    label = f"(a) {args.history:,} history / {args.active} in all"
    verdicts.ratio(label, history_ratios, TARGET_ACTIVE_HISTORY, at_most=True)
    plain_ratios = harness.round_ratios(samples, long_name, PLAIN)
    verdicts.ratio(
        "(b) active() / sqlite3 SELECT", plain_ratios, TARGET_ACTIVE_SQLITE, at_most=True
    )


def judge_rebuilds(verdicts: harness.Verdicts, samples: harness.Samples, events: int) -> None:
    """(c): the rebuild vs the plain copy and in events/s; the INSERT...SELECT floor as info."""
    copy_ratios = harness.round_ratios(samples, COPY, REBUILD)
    label = "(c) rebuild / plain sqlite3, throughput"
    verdicts.ratio(label, copy_ratios, TARGET_REBUILD_RATIO, at_most=False)
    rates = [events / r[0] for r in samples[REBUILD]]
    rate, (low, high) = statistics.median(rates), harness.quartiles(rates)
    spread = f"{low:,.0f}–{high:,.0f}"
    verdicts.line("(c) rebuild, events/s", f"{rate:,.0f}", spread, rate, None, False)
    floor = harness.round_ratios(samples, FLOOR, REBUILD)
    value, (low, high) = statistics.median(floor), harness.quartiles(floor)
    label = "(c) rebuild / INSERT...SELECT, throughput"
    verdicts.line(label, f"{value:.3f}", f"{low:.3f}–{high:.3f}", value, None, False)


def judge_rss(verdicts: harness.Verdicts, rss: RebuildMemory) -> None:
    """(d): the peak RSS of the rebuild, judged only for a log of RSS_TARGET_EVENTS events."""
    peak = rss["peak_kb"] / 1024
    judged = rss["events"] >= RSS_TARGET_EVENTS
    label = f"(d) peak RSS, rebuild of {rss['events']:,} events, MB"
    verdicts.line(label, f"{peak:.0f}", "", peak, TARGET_RSS_MB if judged else None, True)
    if not judged:
        hint = f"--events {RSS_TARGET_EVENTS}"
        print(f"    (its target is for {RSS_TARGET_EVENTS:,} events: {hint})")


def print_header(args: argparse.Namespace, directory: Path) -> None:
    """Versions, where the databases are, the message size, sqlite3's defaults."""
    print(harness.title("read-model", ["eventsourcing", "orjson"]))
    with sqlite3.connect(":memory:") as probe:
        secure_delete = probe.execute("PRAGMA secure_delete").fetchone()[0]
        synchronous = probe.execute("PRAGMA synchronous").fetchone()[0]
    harness.print_directory(
        directory,
        f"message ~{args.chars} chars; "
        f"sqlite3 defaults: synchronous={synchronous}, secure_delete={secure_delete}",
    )


def print_rebuilds(samples: harness.Samples, events: int) -> None:
    """The rebuild variants: median seconds per rebuild and events/s."""
    print(f"\n{f'rebuild variant, {events:,} events':44} {'median s':>14} {'events/s':>10}")
    for name, rounds in samples.items():
        seconds = statistics.median(harness.flatten(rounds))
        print(f"{name:44} {seconds:>14.2f} {events / seconds:>10,.0f}")


def print_rss(rss: RebuildMemory) -> None:
    """What the RSS subprocess saw: memory before and during the rebuild, the lock tail."""
    print(
        f"peak RSS subprocess: {rss['before_kb'] / 1024:.0f} MB after opening the store, "
        f"peak {rss['peak_kb'] / 1024:.0f} MB during the rebuild of {rss['events']:,} events "
        f"({rss['seconds']:.1f} s; VmHWM {'reset' if rss['hwm_reset'] else 'NOT reset'} first)"
    )
    if rss["after_last_batch"] is not None:
        print(
            f"  after the last progress call (last batches, table swap; writers wait): "
            f"{rss['after_last_batch']:.2f} s; WAL file left: {rss['wal_bytes'] / 2**20:,.0f} MB"
        )
    samples = ", ".join(f"{done:,}: {kb / 1024:.0f}" for done, kb in rss["samples"])
    print(f"  RSS while rebuilding (events done: MB): {samples}")


if __name__ == "__main__":
    sys.exit(main())
