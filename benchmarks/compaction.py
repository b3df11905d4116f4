"""Compaction benchmark: replacing 10,000 active messages by 50, against a plain program.

    python benchmarks/compaction.py                      # ~3 min: SQLite and PostgreSQL
    python benchmarks/compaction.py --backend sqlite     # SQLite only
    python benchmarks/compaction.py --messages 500000    # and compact() of 500,000 (memory)
    python benchmarks/compaction.py --check              # exit 1 if a target is missed

Every round makes a fresh session of `--active` (10,000) messages of `--chars` (400)
characters in the store and in the baseline (untimed), then times one compaction of each;
variants interleaved, their order shuffled every round; ratios are medians of per-round
ratios. `summarize` returns a summary and the last 49 messages: 50 active, 9,951 superseded.

  (a) `store.compact(session, summarize)`: begin (read the active messages), summarize,
      commit (one event, projected into the views), the active list returned — vs the plain
      program doing the same job (plain_compaction.py): read the active rows, summarize, one
      transaction (one set-based UPDATE of the superseded rows' active flag, INSERT of the
      summary), the active list read back. Target <= 1.5.
  (b) the commit alone: `store.commit_compaction(attempt, replacement)` (begun and
      summarized untimed) vs the plain program's transaction and read-back. Target <= 1.5.

On SQLite (a file store and a plain sqlite3 file, both WAL at `synchronous=FULL`) and on
PostgreSQL (`--server`: a scratch database per variant, made and dropped here; the plain
psycopg program at `synchronous_commit = on`, as the store's log). Peak RSS of this process
is printed after the rounds (flat: each round's session is as big as the last).

With `--messages N` (e.g. 500000), a subprocess fills a SQLite store with one session of N
active messages, then fresh processes time and measure the peak RSS of `compact()` (the
first write after opening: the session's events are replayed) and, for comparison, of a
process that only reads `active()`: what `summarize` itself is given. Target: compact's
peak <= 1.5x the reader's (compaction_memory.py).
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import harness
from plain_compaction import PlainPostgres, PlainSQLite

from transcripts import TranscriptStore

TARGET = 1.5
KEEP = 49
STORE, PLAIN = "store compact()", "plain program"
STORE_COMMIT, PLAIN_COMMIT = "store commit_compaction()", "plain transaction"


def summarize(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A summary in place of all but the last 49 messages."""
    summary = {"role": "system", "content": f"Summary of {len(messages) - KEEP} messages."}
    return [summary, *messages[-KEEP:]]


class Sessions:
    """Fresh sessions of `count` messages, in the store and in the baseline."""

    def __init__(
        self, store: TranscriptStore, plain: PlainSQLite | PlainPostgres, count: int, chars: int
    ) -> None:
        self.store, self.plain, self.count, self.chars = store, plain, count, chars
        self.made = 0

    def _messages(self, session_id: str) -> list[dict[str, Any]]:
        return [
            {"id": f"{session_id}-{n}", **harness.make_message(self.chars, n)}
            for n in range(self.count)
        ]

    def in_store(self) -> str:
        self.made += 1
        session_id = f"store-{self.made}"
        self.store.start(session_id)
        messages = self._messages(session_id)
        for start in range(0, len(messages), 1000):
            self.store.append(session_id, messages[start : start + 1000])
        self.store.active(session_id)  # projected
        return session_id

    def in_plain(self) -> str:
        self.made += 1
        session_id = f"plain-{self.made}"
        self.plain.fill(session_id, self._messages(session_id))
        return session_id

    def variants(self) -> dict[str, harness.Setup]:
        """Each variant's setup (untimed: a fresh session) and the call to time."""

        def store_compact() -> harness.Call:
            session_id = self.in_store()
            return lambda: self.store.compact(session_id, summarize)

        def plain_compact() -> harness.Call:
            session_id = self.in_plain()
            return lambda: self.plain.compact(session_id, summarize)

        def store_commit() -> harness.Call:
            attempt = self.store.begin_compaction(self.in_store())
            replacement = summarize(attempt.messages)
            return lambda: check(self.store.commit_compaction(attempt, replacement))

        def plain_commit() -> harness.Call:
            session_id = self.in_plain()
            rows = self.plain.read(session_id)
            replacement = summarize([self.plain_message(row) for row in rows])
            return lambda: self.plain.commit(session_id, rows, replacement)

        return {
            STORE: store_compact,
            PLAIN: plain_compact,
            STORE_COMMIT: store_commit,
            PLAIN_COMMIT: plain_commit,
        }

    def plain_message(self, row: tuple[str, int, Any]) -> dict[str, Any]:
        import orjson

        body = row[2]
        return orjson.loads(body) if isinstance(body, str | bytes) else body


def check(result: Any) -> None:
    if not result.committed:
        raise RuntimeError(f"the compaction failed: {result.failure}: {result.error}")


def measure(label: str, sessions: Sessions, args: argparse.Namespace) -> harness.Verdicts:
    """The rounds on one backend, their timings and the ratios against their targets."""
    variants = sessions.variants()
    harness.warm_up(variants, 1)
    samples = harness.run_rounds(variants, args.rounds, 1, random.Random(args.seed))
    table = harness.TimingTable(label_width=36, value_width=12)
    table.header(f"{label}: one compaction of {args.active:,} → {KEEP + 1}", "median µs")
    table.rows(samples)
    print()
    verdicts = harness.Verdicts(heading=f"{label} ratio", widths=(44, 8, 15, 8))
    ratio = harness.round_ratios(samples, STORE, PLAIN)
    verdicts.ratio("(a) compact() / plain program", ratio, TARGET, at_most=True)
    ratio = harness.round_ratios(samples, STORE_COMMIT, PLAIN_COMMIT)
    verdicts.ratio("(b) commit / plain transaction", ratio, TARGET, at_most=True)
    verdicts.warn_if_noisy("rerun, or raise --rounds")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process after the rounds: {peak:,.0f} MB\n")
    return verdicts


@contextmanager
def sqlite_pair(directory: Path) -> Iterator[tuple[TranscriptStore, PlainSQLite]]:
    store = TranscriptStore.open(f"sqlite:///{directory / 'store.db'}")
    plain = PlainSQLite(directory / "plain.db")
    try:
        yield store, plain
    finally:
        store.close()
        plain.close()


@contextmanager
def postgres_pair(server: str) -> Iterator[tuple[TranscriptStore, PlainPostgres]]:
    with harness.scratch_database(server) as store_url, harness.scratch_database(server) as other:
        store = TranscriptStore.open(store_url)
        plain = PlainPostgres(other)
        try:
            yield store, plain
        finally:
            store.close()
            plain.close()


def run(args: argparse.Namespace, directory: Path) -> int:
    started = time.perf_counter()
    print(harness.title("compaction", ["eventsourcing", "psycopg"]))
    harness.print_directory(directory, f"{args.active:,} messages of ~{args.chars} chars")
    print()
    missed: list[harness.Verdicts] = []
    pairs: list[tuple[str, Callable[[], Any]]] = []
    if args.backend in ("sqlite", "both"):
        pairs.append(("SQLite", lambda: sqlite_pair(directory)))
    if args.backend in ("postgres", "both"):
        pairs.append(("PostgreSQL", lambda: postgres_pair(args.server)))
    for label, pair in pairs:
        with pair() as (store, plain):
            missed.append(measure(label, Sessions(store, plain, args.active, args.chars), args))
    if args.messages:
        from compaction_memory import report

        missed.append(report(directory, args.messages, args.chars, TARGET))
    print(f"total {time.perf_counter() - started:.0f} s")
    return max(verdicts.exit_code(args.check) for verdicts in missed)


def main() -> int:
    parser = harness.new_parser(__doc__ or "")
    harness.add_count(parser, "--active", 10_000, "active messages compacted")
    harness.add_count(parser, "--rounds", 7, "interleaved rounds (one compaction per variant)")
    harness.add_chars_option(parser, 400)
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    harness.add_server_option(parser)
    harness.add_count(parser, "--messages", 0, "also compact() a session this long (memory)")
    harness.add_scratch_options(parser)
    harness.add_seed_option(parser)
    harness.add_check_option(parser)
    return harness.run_in_scratch_directory(parser.parse_args(), run)


if __name__ == "__main__":
    sys.exit(main())
