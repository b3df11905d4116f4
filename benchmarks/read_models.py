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
      indexes and triggers, and the tables those triggers write, such as a search index),
      with the supersede updates and active deletes of compactions, but no renumbering. Both
      write into the store's file. Targets: rebuild / plain >= 0.5, and >= 100,000 events/s.
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
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import harness
import orjson
from transcripts import TranscriptStore

TARGET_ACTIVE_HISTORY = 1.2
TARGET_ACTIVE_SQLITE = 1.5
TARGET_REBUILD_RATIO = 0.5
TARGET_REBUILD_RATE = 100_000
TARGET_RSS_MB = 150
RSS_TARGET_EVENTS = 1_000_000

VIEWS = ("sessions", "active_messages", "message_history", "compaction_attempts")
COPY_PREFIX = "bench_copy_"
TOPIC = "transcripts:Transcript."
REBUILD_BATCH = 1000  # events per transaction, as the store's catch-up takes them

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


# -- (b) the mutable-rows baseline ----------------------------------------------------------


class MutableRows:
    """The conventional table: one mutable row per active message, in its own file."""

    def __init__(self, path: Path, rows: list[tuple[str, int, str]]) -> None:
        self.connection = sqlite3.connect(path)
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute(
            "CREATE TABLE t (session_id TEXT NOT NULL, position INTEGER NOT NULL, "
            "message TEXT NOT NULL, PRIMARY KEY (session_id, position))"
        )
        with self.connection:
            self.connection.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)

    def read(self, session: str) -> list[dict[str, Any]]:
        cursor = self.connection.execute(
            "SELECT message FROM t WHERE session_id = ? ORDER BY position", (session,)
        )
        return [orjson.loads(row[0]) for row in cursor.fetchall()]

    def close(self) -> None:
        self.connection.close()


def active_rows(path: Path) -> list[tuple[str, int, str]]:
    """Every row of the store's `active_messages` table at `path`."""
    with sqlite3.connect(path) as connection:
        return connection.execute(
            "SELECT session_id, position, message FROM active_messages"
        ).fetchall()


# -- (c) the plain-sqlite3 baselines ----------------------------------------------------------


def _is_virtual(sql: str | None) -> bool:
    """Whether `sql` creates a virtual table (FTS5, say)."""
    return (sql or "").upper().startswith("CREATE VIRTUAL")


def copy_schema(c: sqlite3.Connection) -> list[str]:
    """The DDL of the views as they are in the file, renamed with COPY_PREFIX: their tables,
    indexes and triggers, and the tables those triggers write (a search index, say)."""
    objects = c.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master "
        "WHERE sql IS NOT NULL AND substr(name, 1, ?) != ?",
        (len(COPY_PREFIX), COPY_PREFIX),
    ).fetchall()
    tables = {name for kind, name, _, _ in objects if kind == "table"}
    virtual = {name for kind, name, _, sql in objects if kind == "table" and _is_virtual(sql)}
    shadow = {name for name in tables if any(name.startswith(v + "_") for v in virtual)}
    copied = {*VIEWS, "stored_events"}
    for kind, _, table, sql in objects:
        if kind == "trigger" and table in copied:
            copied |= {t for t in tables - shadow if re.search(rf"\b{re.escape(t)}\b", sql)}
    chosen = [o for o in objects if o[2] in copied and o[1] not in shadow]
    names = sorted({name for _, name, _, _ in chosen}, key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    order = {"table": 0, "index": 1, "trigger": 2}
    chosen.sort(key=lambda o: order.get(o[0], 3))
    return [pattern.sub(lambda m: COPY_PREFIX + m.group(1), sql) for _, _, _, sql in chosen]


class _CopyBatch:
    """The rows one batch of events writes, built from the decoded payloads by plain code."""

    HISTORY = f"INSERT INTO {COPY_PREFIX}message_history VALUES (?,?,?,?,?,?,?,?,?,?)"
    ACTIVE = f"INSERT INTO {COPY_PREFIX}active_messages VALUES (?,?,?,?,?)"
    ATTEMPT = f"INSERT INTO {COPY_PREFIX}compaction_attempts VALUES ({','.join('?' * 15)})"
    SESSION = f"INSERT OR REPLACE INTO {COPY_PREFIX}sessions VALUES ({','.join('?' * 15)})"
    SUPERSEDE = (
        f"UPDATE {COPY_PREFIX}message_history SET active = 0, superseded_by = ? "
        "WHERE session_id = ? AND message_id = ?"
    )
    UNACTIVE = f"DELETE FROM {COPY_PREFIX}active_messages WHERE session_id = ? AND message_id = ?"

    def __init__(self) -> None:
        self.history: list[tuple[Any, ...]] = []
        self.active: list[tuple[Any, ...]] = []
        self.attempts: list[tuple[Any, ...]] = []
        self.superseded: list[tuple[str, str, str]] = []
        self.sessions: dict[str, list[Any]] = {}

    def take(
        self, sessions: dict[str, list[Any]], originator: str, number: int, kind: str, data: Any
    ) -> None:
        at = data["timestamp"]["_data_"]
        if kind == "Started":
            metadata = orjson.dumps(data["metadata"]).decode()
            row = [data["session_id"], originator, data["source"], data["model"],
                   data["parent_id"], metadata, at, at, number, 0, 0, 0, 0, 0, None]  # fmt: skip
            sessions[originator] = row
        else:
            row = sessions[originator]
            if kind == "MessageAppended":
                self.message(row, data["message_id"], data["message"], None, at, number)
                row[10] += 1
            elif kind == "CompactionCommitted":
                added = [new["id"] for new in data["added"]]
                for new in data["added"]:
                    self.message(row, new["id"], new["message"], data["compaction_id"], at, number)
                self.superseded += [(data["compaction_id"], row[0], i) for i in data["superseded"]]
                row[10] += len(added) - len(data["superseded"])
                row[11] += 1
                self.attempt(row[0], data, number, "committed", data["superseded"], added, at)
            elif kind == "CompactionFailed":
                row[12] += 1
                self.attempt(row[0], data, number, "failed", data["would_supersede"], [], at)
            row[7], row[8] = at, number
        self.sessions[originator] = row

    def message(
        self, row: list[Any], message_id: str, content: dict[str, Any], by: str | None,
        at: str, number: int,
    ) -> None:  # fmt: skip
        row[9] += 1
        text = orjson.dumps({"id": message_id, **content}).decode()
        role = content["role"]
        self.history.append((row[0], row[9], message_id, role, text, 1, None, by, at, number))
        self.active.append((row[0], row[9], message_id, role, text))

    def attempt(
        self, session_id: str, data: Any, number: int, status: str, superseded: list[str],
        added: list[str], at: str,
    ) -> None:  # fmt: skip
        self.attempts.append((
            data["compaction_id"], session_id, number, status, data["reason"],
            data.get("failure"), data.get("error"), data["based_on_version"], len(superseded),
            len(added), orjson.dumps(superseded).decode(), orjson.dumps(added).decode(),
            data["tokens_before"], data["tokens_after"], at,
        ))  # fmt: skip

    def write(self, c: sqlite3.Connection) -> None:
        c.executemany(self.HISTORY, self.history)
        c.executemany(self.ACTIVE, self.active)
        if self.superseded:
            c.executemany(self.SUPERSEDE, self.superseded)
            c.executemany(self.UNACTIVE, [(s, m) for _, s, m in self.superseded])
        c.executemany(self.ATTEMPT, self.attempts)
        c.executemany(self.SESSION, self.sessions.values())


class PlainCopy:
    """Writes the rows the views hold with plain sqlite3, into copies of the views' tables."""

    def __init__(self, path: Path, batch: int = REBUILD_BATCH) -> None:
        self.connection = sqlite3.connect(path, isolation_level=None, timeout=60)
        self.batch = batch

    def reset(self) -> None:
        """Fresh, empty copies of the views' tables (and of the raw events table)."""
        c = self.connection
        c.execute("BEGIN IMMEDIATE")
        self._drop(c)
        for statement in copy_schema(c):
            c.execute(statement)
        c.execute(f"CREATE TABLE {COPY_PREFIX}progress (position INTEGER NOT NULL)")
        c.execute(f"INSERT INTO {COPY_PREFIX}progress VALUES (0)")
        c.execute("COMMIT")

    def drop(self) -> None:
        self.connection.execute("BEGIN IMMEDIATE")
        self._drop(self.connection)
        self.connection.execute("COMMIT")

    @staticmethod
    def _drop(c: sqlite3.Connection) -> None:
        copies = c.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND substr(name, 1, ?) = ?",
            (len(COPY_PREFIX), COPY_PREFIX),
        ).fetchall()
        virtual_first = sorted(copies, key=lambda row: not _is_virtual(row[1]))
        for name, _ in virtual_first:  # a virtual table drops its shadow tables with it
            c.execute(f'DROP TABLE IF EXISTS "{name}"')

    def copy(self) -> int:
        """Stream the log and write the view rows, one transaction per batch of events."""
        c = self.connection
        sessions: dict[str, list[Any]] = {}  # transcript id -> its sessions row, as a list
        position = done = 0
        while True:
            rows = c.execute(
                "SELECT rowid, originator_id, originator_version, topic, state FROM stored_events "
                "WHERE rowid > ? ORDER BY rowid LIMIT ?",
                (position, self.batch),
            ).fetchall()
            if not rows:
                return done
            batch = _CopyBatch()
            for _, originator, number, topic, state in rows:
                batch.take(sessions, originator, number, topic[len(TOPIC) :], orjson.loads(state))
            c.execute("BEGIN IMMEDIATE")
            batch.write(c)
            position = rows[-1][0]
            c.execute(f"UPDATE {COPY_PREFIX}progress SET position = ?", (position,))
            c.execute("COMMIT")
            done += len(rows)

    def insert_select(self) -> int:
        """The floor: copy the raw event rows, no decoding, in the same transactions."""
        c = self.connection
        head = c.execute("SELECT MAX(rowid) FROM stored_events").fetchone()[0] or 0
        for first in range(0, head, self.batch):
            c.execute("BEGIN IMMEDIATE")
            c.execute(
                f"INSERT INTO {COPY_PREFIX}stored_events SELECT * FROM stored_events "
                "WHERE rowid > ? AND rowid <= ?",
                (first, first + self.batch),
            )
            c.execute("COMMIT")
        return head

    def counts(self) -> dict[str, tuple[int, int]]:
        """Rows per view: (live view, plain copy) — the copy should match the view."""
        c = self.connection
        return {
            view: (
                c.execute(f"SELECT COUNT(*) FROM {view}").fetchone()[0],
                c.execute(f"SELECT COUNT(*) FROM {COPY_PREFIX}{view}").fetchone()[0],
            )
            for view in VIEWS
        }

    def close(self) -> None:
        self.connection.close()


# -- (d) peak RSS in a fresh process --------------------------------------------------------


def _status_kb(field: str) -> int:
    """A kB field of /proc/self/status (VmRSS, VmHWM); 0 if absent."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def rss_child(url: str, path: str) -> None:
    """Runs in the subprocess: open the store, rebuild it, print what memory it took (JSON)."""
    import resource

    store = TranscriptStore.open(url)
    gc.collect()
    before = _status_kb("VmRSS")
    try:  # reset the high-water mark (Linux >= 4.0), so the peak is the rebuild's own
        Path("/proc/self/clear_refs").write_text("5")
        reset = _status_kb("VmHWM") <= before + 1024
    except OSError:
        reset = False
    samples: list[tuple[int, int]] = []
    last = [time.perf_counter()]

    def progress(done: int, total: int) -> None:
        samples.append((done, _status_kb("VmRSS")))
        last[0] = time.perf_counter()

    started = time.perf_counter()
    events = store.rebuild_projections(progress)
    ended = time.perf_counter()
    peak = _status_kb("VmHWM")
    if not peak:  # no /proc: ru_maxrss (on Linux it also counts the parent's RSS before exec)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wal = Path(path + "-wal")
    wal_bytes = wal.stat().st_size if wal.exists() else 0
    store.close()
    print(
        json.dumps(
            {
                "events": events,
                "seconds": ended - started,
                "after_last_batch": ended - last[0] if samples else None,
                "before_kb": before,
                "peak_kb": peak,
                "hwm_reset": reset,
                "wal_bytes": wal_bytes,
                "samples": samples[:: max(1, len(samples) // 10)] + samples[-1:],
            }
        )
    )


def measure_rss(path: Path) -> dict[str, Any]:
    """Rebuild the store at `path` in a fresh process; what its memory did (the JSON)."""
    output = subprocess.run(
        [sys.executable, __file__, "--rss-child", str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(output.stdout.strip().splitlines()[-1])


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
        epilog="Targets: (a) <= 1.2, (b) <= 1.5, (c) >= 0.5 and >= 100k events/s, "
        "(d) <= 150 MB at 1M events.",
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
        rss_child(f"sqlite:///{args.rss_child}", args.rss_child)
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
    rss = None if args.no_rss else measure_rss(path)

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
    verdicts.line("(c) rebuild, events/s", f"{rate:,.0f}", spread, rate, TARGET_REBUILD_RATE, False)
    floor = harness.round_ratios(samples, FLOOR, REBUILD)
    value, (low, high) = statistics.median(floor), harness.quartiles(floor)
    label = "(c) rebuild / INSERT...SELECT, throughput"
    verdicts.line(label, f"{value:.3f}", f"{low:.3f}–{high:.3f}", value, None, False)


def judge_rss(verdicts: harness.Verdicts, rss: dict[str, Any]) -> None:
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


def print_rss(rss: dict[str, Any]) -> None:
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
