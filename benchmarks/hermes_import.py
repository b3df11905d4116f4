"""Hermes import benchmark: `import_hermes` of a long session, and whether it is linear in rows.

    python benchmarks/hermes_import.py            # ~1 min; prints a table
    python benchmarks/hermes_import.py --check    # exit 1 if a target is missed

A Hermes `state.db` with the tables hermes-agent 0.19.0 writes (taken from
tests/data/hermes/0.19.0/state.db) holds one session written as Hermes writes it: turns of a
user message and a reply, every third one with a tool call and its result; every 40 turns an
in-place compaction (head and tail copies around a summary, stamped 1 µs apart as one
transaction, the rows before it archived); every third compaction fails first (its copies
flushed on top of the live rows, row by row) and the next one commits. Each size is imported
into a fresh SQLite store `--rounds` times; the median is kept.

  (a) the long session (`--long`, 2,000 turns, ~5,800 rows): target < 2 s.
  (b) its CPU time per row vs the short session's (`--short`, 200 turns): target <= 1.5
      (linear in rows). CPU time, since the wall clock's share of disk syncs (one per
      transaction: a batch of appends, a compaction) varies with the disk, not the rows.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import time
from pathlib import Path

import harness

from transcripts import TranscriptStore
from transcripts.adapters.importers.hermes import import_hermes

TEMPLATE = Path(__file__).resolve().parents[1] / "tests" / "data" / "hermes" / "0.19.0" / "state.db"
TARGET_SECONDS = 2.0
TARGET_RATIO = 1.5
TABLES = ("schema_version", "sessions", "messages")


class Writer:
    """Rows of one session, the way Hermes writes them."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.clock = 1_800_000_000.0
        self.rows = 0

    def write(self, role: str, content: str, *, stamp: float | None = None, **columns: str) -> None:
        self.clock += 0.002
        names = ["session_id", "role", "content", "timestamp", *columns]
        values = [
            "s1",
            role,
            content,
            stamp if stamp is not None else self.clock,
            *columns.values(),
        ]
        marks = ", ".join("?" * len(values))
        self.connection.execute(
            f"INSERT INTO messages ({', '.join(names)}) VALUES ({marks})", values
        )
        self.rows += 1

    def live(self) -> list[tuple]:
        return self.connection.execute(
            "SELECT role, content, tool_calls, tool_call_id, tool_name FROM messages "
            "WHERE active = 1 ORDER BY id"
        ).fetchall()

    def compact(self, number: int, *, commit: bool) -> None:
        live = self.live()
        burst = [
            *live[:2],
            ("user", f"[CONTEXT COMPACTION — REFERENCE ONLY] summary {number}", None, None, None),
            *live[-3:],
        ]
        if commit:
            self.connection.execute(
                "UPDATE messages SET active = 0, compacted = 1 WHERE active = 1"
            )
        start = self.clock + 0.001
        for index, (role, content, calls, call_id, tool) in enumerate(burst):
            columns = {
                k: v
                for k, v in (("tool_calls", calls), ("tool_call_id", call_id), ("tool_name", tool))
                if v
            }
            self.write(role, content, stamp=start + index * 1e-6 if commit else None, **columns)
        self.clock = start + 0.001


def make_source(path: Path, turns: int) -> int:
    """A state.db of one session of `turns` turns; its row count."""
    with sqlite3.connect(f"file:{TEMPLATE}?mode=ro", uri=True) as template:
        tables = [
            sql
            for (sql,) in template.execute(
                f"SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN {TABLES}"
            )
        ]
        version = template.execute("SELECT version FROM schema_version").fetchone()[0]
    template.close()
    with sqlite3.connect(path) as connection:
        for sql in tables:
            connection.execute(sql)
        connection.execute("INSERT INTO schema_version VALUES (?)", (version,))
        connection.execute("INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1)")
        writer = Writer(connection)
        compactions = 0
        for turn in range(1, turns + 1):
            writer.write("user", f"Step {turn}: please tidy module_{turn}.")
            if turn % 3 == 0:
                function = '{"name": "read_file", "arguments": "{}"}'
                call = f'[{{"id": "c{turn}", "type": "function", "function": {function}}}]'
                writer.write("assistant", "", tool_calls=call)
                writer.write(
                    "tool",
                    f"contents of module_{turn}",
                    tool_call_id=f"c{turn}",
                    tool_name="read_file",
                )
            writer.write("assistant", f"Done with step {turn}.")
            if turn % 40 == 0:
                compactions += 1
                if compactions % 3 == 0:
                    writer.compact(compactions, commit=False)
                writer.compact(compactions, commit=True)
    connection.close()
    return writer.rows


def seconds(source: Path, directory: Path, rounds: int) -> tuple[float, float]:
    """The median seconds, wall clock and this process's CPU, of importing `source` into a
    fresh SQLite store (the CPU time leaves out the disk's syncs and other work's turns)."""
    walls, cpus = [], []
    for round_number in range(rounds):
        url = f"sqlite:///{directory / f'store-{source.stem}-{round_number}.db'}"
        with TranscriptStore.open(url) as store:
            wall, cpu = time.perf_counter(), time.process_time()
            import_hermes(store, source)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def run(args: argparse.Namespace, directory: Path) -> int:
    short, long = directory / "short.db", directory / "long.db"
    rows_short, rows_long = make_source(short, args.short), make_source(long, args.long)
    seconds(short, directory, 1)  # warm up
    (time_short, cpu_short), (time_long, cpu_long) = (
        seconds(short, directory, args.rounds),
        seconds(long, directory, args.rounds),
    )
    ratio = (cpu_long / rows_long) / (cpu_short / rows_short)
    wall_ratio = (time_long / rows_long) / (time_short / rows_short)
    print(f"{'session':<24} {'rows':>6} {'seconds':>8} {'CPU s':>6} {'µs/row':>7}")
    for name, rows, took, cpu in (
        (f"short ({args.short} turns)", rows_short, time_short, cpu_short),
        (f"long ({args.long} turns)", rows_long, time_long, cpu_long),
    ):
        print(f"{name:<24} {rows:>6} {took:>8.3f} {cpu:>6.3f} {took / rows * 1e6:>7.1f}")
    met_time, met_ratio = time_long < TARGET_SECONDS, ratio <= TARGET_RATIO
    verdict = {True: "met", False: "MISSED"}
    print(f"(a) long import: {time_long:.2f} s (target < {TARGET_SECONDS} s): {verdict[met_time]}")
    print(
        f"(b) CPU per row, long / short: {ratio:.2f} (target <= {TARGET_RATIO}): "
        f"{verdict[met_ratio]}; wall clock {wall_ratio:.2f} (info: the disk's syncs vary)"
    )
    return 1 if args.check and not (met_time and met_ratio) else 0


def main() -> int:
    parser = harness.new_parser(__doc__)
    harness.add_count(parser, "--short", 200, "turns of the short session")
    harness.add_count(parser, "--long", 2000, "turns of the long session")
    harness.add_count(parser, "--rounds", 5, "imports of each session")
    harness.add_scratch_options(parser)
    harness.add_check_option(parser)
    args = parser.parse_args()
    return harness.run_in_scratch_directory(args, run)


if __name__ == "__main__":
    sys.exit(main())
