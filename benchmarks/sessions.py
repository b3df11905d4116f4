"""Many live sessions benchmark: an append when one process writes 1,000 sessions in turn.

    python benchmarks/sessions.py            # ~2 min; prints a table
    python benchmarks/sessions.py --check    # exit 1 if the target is missed
    python benchmarks/sessions.py --help

A gateway process serves many conversations at once: it appends to one session, then to
another, round-robin. One SQLite file store holds `--sessions` (1,000) sessions of
`--history` (1,000) messages each; measured in interleaved rounds, each ratio the median of
per-round ratios of per-round medians:

  `store.append(session, [message])` cycling through all the sessions, vs the same append
  cycling through the first `--few` (10) of them. Target <= 1.2: the cost of an append
  does not depend on how many sessions the process writes (every session it writes stays
  in memory; one evicted would be replayed from its events on its next append).

Info rows: the first append to a session after the store is reopened (its events are
replayed: what every append would cost past the cache).
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from collections.abc import Iterator
from pathlib import Path

import harness

from transcripts import TranscriptStore

TARGET = 1.2

ROUND_ROBIN = "append, {count:,} sessions in turn"


def seed(store: TranscriptStore, sessions: int, history: int, chars: int) -> list[str]:
    """Start `sessions` sessions of `history` messages each; their ids."""
    ids = [f"live-{k}" for k in range(sessions)]
    for session in ids:
        store.start(session, source="benchmark")
        for first in range(0, history, 500):
            messages = range(first, min(history, first + 500))
            store.append(session, [harness.make_message(chars, n) for n in messages])
    return ids


def round_robin(store: TranscriptStore, sessions: list[str], chars: int) -> harness.Setup:
    """Appends to `sessions` in turn, picking up where the last round stopped."""
    turn: Iterator[str] = itertools.cycle(sessions)
    message = harness.make_message(chars, 1)
    return harness.same_call(lambda: store.append(next(turn), [message]))


def cold_appends(url: str, sessions: list[str], chars: int) -> list[float]:
    """The first append to each of `sessions` after reopening the store."""
    message = harness.make_message(chars, 1)
    samples = []
    with TranscriptStore.open(url) as store:
        for session in sessions:
            started = time.perf_counter()
            store.append(session, [message])
            samples.append(time.perf_counter() - started)
    return samples


def main(argv: list[str] | None = None) -> int:
    """Parse the options; run in a scratch directory."""
    parser = harness.new_parser(__doc__, epilog=f"Target: <= {TARGET}.")
    harness.add_round_options(parser, rounds=40, batch=25, calls="appends")
    harness.add_count(parser, "--sessions", 1000, "sessions written in turn")
    harness.add_count(parser, "--few", 10, "sessions of the baseline")
    harness.add_count(parser, "--history", 1000, "messages in each session")
    harness.add_chars_option(parser, 400)
    harness.add_scratch_options(parser)
    harness.add_seed_option(parser)
    harness.add_check_option(parser)
    args = parser.parse_args(argv)
    if not 1 <= args.few <= args.sessions or args.rounds < 1 or args.batch < 1:
        parser.error("need 1 <= --few <= --sessions, and --rounds, --batch >= 1")
    return harness.run_in_scratch_directory(args, run)


def run(args: argparse.Namespace, directory: Path) -> int:
    """Seed the store, time both variants in interleaved rounds, print the tables."""
    rng = random.Random(args.seed)
    url = f"sqlite:///{directory / 'store.db'}"
    started = time.perf_counter()
    with TranscriptStore.open(url) as store:
        sessions = seed(store, args.sessions, args.history, args.chars)
        seeded = time.perf_counter() - started
        few, many = (ROUND_ROBIN.format(count=n) for n in (args.few, args.sessions))
        variants = {
            few: round_robin(store, sessions[: args.few], args.chars),
            many: round_robin(store, sessions, args.chars),
        }
        # Every session written once, as in a gateway that has been running a while.
        harness.timed(variants[many](), args.sessions)
        samples = harness.run_rounds(variants, args.rounds, args.batch, rng)
    cold = cold_appends(url, sessions[: min(20, args.sessions)], args.chars)

    print(harness.title("sessions", ("eventsourcing",)))
    harness.print_directory(
        directory,
        f"{args.sessions:,} sessions of {args.history:,} messages ({args.chars} characters), "
        f"seeded in {seeded:.0f} s; {args.rounds} rounds of {args.batch} appends per variant",
    )
    table = harness.TimingTable(44, 17)
    table.header("variant", "median µs/append")
    table.rows(samples)
    table.row(f"first append after reopening (info, {len(cold)})", cold)
    print()
    verdicts = harness.Verdicts()
    ratios = harness.round_ratios(samples, many, few)
    verdicts.ratio(f"{args.sessions:,} sessions vs {args.few:,}", ratios, TARGET, at_most=True)
    verdicts.warn_if_noisy("run again, or with more --rounds")
    return verdicts.exit_code(args.check)


if __name__ == "__main__":
    raise SystemExit(main())
