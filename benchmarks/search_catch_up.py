"""Search after a burst: the first `search()` after `--messages` appends, which catches the
full-text index up first, against the same search on a current index, on a SQLite file.

    python benchmarks/search_catch_up.py            # ~1 min; prints a table
    python benchmarks/search_catch_up.py --check    # exit 1 if a target is missed

Each round makes a fresh store whose index is current (it was searched), appends
`--messages` (10,000) messages of `--chars` (400) characters in calls of 100 (untimed), the
last one holding a rare word, then times:

  (a) the catch-up: the first search of the rare word (which must find it: read-your-writes)
      less the same search on the index it left current; as messages indexed per second.
      Target >= 50,000/s. Beside it, the floor: a plain sqlite3 program indexing the same
      texts (read from a table of JSON rows) into an FTS5 table of the store's shape (external
      content: a view of the rows, its text made by an SQL function; one INSERT … SELECT), in
      one transaction at `synchronous=NORMAL`, and the catch-up's time over the floor's; and,
      for comparison, the same program into the shape of the release before (an FTS5 table
      keeping its own copy of the text and ids, rows inserted from Python).
  (b) the first search against the same search on a current index (the median of
      `--repeats`). The issue asks <= 2x, which no catch-up can meet: indexing 10,000
      messages at 50,000/s takes 200 ms, a search a fraction of a millisecond. So (b) is
      reported as measured ("info"), beside its restatement: the first search against what
      the same messages cost when appends indexed them inline (the difference, per message,
      between a plain sqlite3 INSERT + FTS5 + COMMIT and an INSERT + COMMIT at
      `synchronous=NORMAL`, over `--inline` appends, times `--messages`) plus the search.
      Target <= 2.

Ratios are medians of the per-round ratios.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
from pathlib import Path

import harness
import orjson
from append import Baseline

from transcripts import TranscriptStore

TARGET_RATE = 50_000  # messages indexed per second
TARGET_VS_INLINE = 2.0
RARE = "albatross"
CALL = 100  # messages per append call
SHAPES = {"external": "store's shape", "stored": "text stored, before"}  # FTS5 tables


def main(argv: list[str] | None = None) -> int:
    parser = harness.new_parser(__doc__)
    harness.add_count(parser, "--rounds", 5, "rounds (a fresh store each)")
    harness.add_count(parser, "--messages", 10_000, "messages appended behind the index")
    harness.add_count(parser, "--repeats", 20, "searches of a current index per round")
    harness.add_count(parser, "--inline", 2_000, "appends of each plain sqlite3 program")
    harness.add_chars_option(parser, 400)
    harness.add_scratch_options(parser)
    harness.add_check_option(parser)
    args = parser.parse_args(argv)
    return harness.run_in_scratch_directory(args, run)


def run(args: argparse.Namespace, directory: Path) -> int:
    print(harness.title("Search after a burst", ["eventsourcing"]))
    harness.print_directory(directory, f"{args.messages:,} messages of {args.chars} characters")
    rates, first_ratios, inline_ratios = [], [], []
    floor_rates: dict[str, list[float]] = {shape: [] for shape in SHAPES}
    floor_ratios: dict[str, list[float]] = {shape: [] for shape in SHAPES}
    firsts, currents, inlines = [], [], []
    for number in range(args.rounds):
        first, current = _burst(directory / f"store{number}.db", args)
        for shape in SHAPES:
            floor = _plain_indexing(directory / f"{shape}{number}.db", args, shape)
            floor_rates[shape].append(args.messages / floor)
            floor_ratios[shape].append((first - current) / floor)
        inline = _inline_cost(directory / f"plain{number}", args) * args.messages
        rates.append(args.messages / (first - current))
        first_ratios.append(first / current)
        inline_ratios.append(first / (inline + current))
        firsts.append(first)
        currents.append(current)
        inlines.append(inline)
    rate, vs_inline = statistics.median(rates), statistics.median(inline_ratios)
    print(f"first search after {args.messages:,} appends: {statistics.median(firsts) * 1e3:.1f} ms")
    print(f"the same search, index current:    {statistics.median(currents) * 1e3:.2f} ms")
    print(f"indexing them inline (as appends did): {statistics.median(inlines) * 1e3:.1f} ms")
    print()
    print(f"{'measure':<48} {'value':>10} {'target':>10}")
    print(f"{'(a) catch-up, messages/s':<48} {rate:>10,.0f} {'>= 50,000':>10}")
    for shape, name in SHAPES.items():
        floor_rate = statistics.median(floor_rates[shape])
        print(f"{f'    plain FTS5 ({name}), messages/s':<48} {floor_rate:>10,.0f} {'info':>10}")
        print(f"{f'    catch-up / plain FTS5 ({name})':<48} "
              f"{statistics.median(floor_ratios[shape]):>10.2f} {'info':>10}")  # fmt: skip
    print(f"{'(b) first search / search, index current':<48} "
          f"{statistics.median(first_ratios):>10.0f} {'info':>10}")  # fmt: skip
    print(f"{'(b) first search / (inline indexing + search)':<48} {vs_inline:>10.2f} {'<= 2':>10}")
    missed = rate < TARGET_RATE or vs_inline > TARGET_VS_INLINE
    return 1 if args.check and missed else 0


def _burst(path: Path, args: argparse.Namespace) -> tuple[float, float]:
    """Seconds of the first search after the burst, and the median of the searches after."""
    with TranscriptStore.open(f"sqlite:///{path}") as store:
        store.start("burst")
        store.search(RARE)  # the index is current
        for start in range(0, args.messages, CALL):
            count = min(CALL, args.messages - start)
            batch = [harness.make_message(args.chars, start + n) for n in range(count)]
            if start + count == args.messages:
                batch[-1]["content"] += f" {RARE}"
            store.append("burst", batch)
        hits: list[object] = []
        [first] = harness.timed(lambda: hits.extend(store.search(RARE)), 1)
        if len(hits) != 1:
            raise AssertionError(f"the first search found {len(hits)} messages, not the last")
        current = statistics.median(harness.timed(lambda: store.search(RARE), args.repeats))
    return first, current


def _plain_indexing(path: Path, args: argparse.Namespace, shape: str) -> float:
    """Seconds a plain sqlite3 program takes to index the burst's texts, read from a table
    of JSON rows, into an FTS5 table of `shape`, in one transaction."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.create_function("text_of", 1, _text_of, deterministic=True)
        connection.execute("CREATE TABLE history (message_id TEXT PRIMARY KEY, message TEXT)")
        if shape == "external":
            connection.execute(
                "CREATE VIEW content AS SELECT rowid AS id, text_of(message) AS text, "
                "message_id FROM history"
            )
            connection.execute(
                "CREATE VIRTUAL TABLE search USING fts5(text, message_id UNINDEXED, "
                "content = 'content', content_rowid = 'id', tokenize = 'porter unicode61')"
            )
        else:
            connection.execute(
                "CREATE VIRTUAL TABLE search USING fts5(text, message_id UNINDEXED, "
                "tokenize = 'porter unicode61')"
            )
        with connection:
            connection.execute("BEGIN")
            connection.executemany(
                "INSERT INTO history VALUES (?, ?)",
                [
                    (f"m{n}", orjson.dumps(harness.make_message(args.chars, n)).decode())
                    for n in range(args.messages)
                ],
            )
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the rows' writes are not timed

        def index_external() -> None:
            connection.execute("BEGIN")
            connection.execute(
                "INSERT INTO search (rowid, text) SELECT rowid, text_of(message) FROM history"
            )
            connection.execute("COMMIT")

        def index_stored() -> None:
            connection.execute("BEGIN")
            rows = connection.execute("SELECT rowid, message_id, message FROM history")
            connection.executemany(
                "INSERT INTO search (rowid, text, message_id) VALUES (?, ?, ?)",
                [(n, _text_of(m), i) for n, i, m in rows.fetchall()],
            )
            connection.execute("COMMIT")

        [seconds] = harness.timed(index_external if shape == "external" else index_stored, 1)
    finally:
        connection.close()
    return seconds


def _text_of(message: str) -> str:
    return str(orjson.loads(message)["content"])


def _inline_cost(directory: Path, args: argparse.Namespace) -> float:
    """Seconds per message that indexing it in its append's transaction adds, measured on
    plain sqlite3 programs at synchronous=NORMAL (interleaved, the median of 5 halves)."""
    directory.mkdir()
    message = harness.make_message(args.chars, 1)
    plain = Baseline(directory / "plain.db", 0, message, "NORMAL")
    searched = Baseline(directory / "searched.db", 0, message, "NORMAL", search=True)
    differences = []
    try:
        for _ in range(5):
            times = {}
            for name, baseline in (("plain", plain), ("searched", searched)):
                times[name] = statistics.median(
                    harness.timed(lambda b=baseline: b.append(message), args.inline // 5)
                )
            differences.append(times["searched"] - times["plain"])
    finally:
        plain.close()
        searched.close()
    return max(0.0, statistics.median(differences))


if __name__ == "__main__":
    sys.exit(main())
