"""PostgreSQL full-text search benchmark: what a search costs as its matches grow.

    python benchmarks/postgres_search.py --server postgresql://postgres@127.0.0.1:5432/postgres

Makes a fresh database on the server (dropped at the end), stores `--messages` (20,000) user
messages of 400 characters drawn from 5,000 made-up words, every one holding a very common
word, one in four a common word and four of them a rare word; then times searches of each
(20 hits, medians of `--repeats` (7), interleaved), reported against the rare word's search
in the same run, and a rebuild of the views (with their search table).
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import sys
import time

import harness

from transcripts import TranscriptStore

WORDS = [f"w{n:04d}x" for n in range(5000)]
RARE, COMMON, VERY_COMMON = "albatross", "harbour", "lisbon"


def main(argv: list[str] | None = None) -> int:
    """Parse the options; run in a scratch database beside --server's."""
    parser = harness.new_parser(__doc__)
    harness.add_server_option(parser, required=True)
    harness.add_count(parser, "--messages", 20_000, "user messages, 1,000 per session")
    harness.add_count(parser, "--repeats", 7, "interleaved searches of each word")
    args = parser.parse_args(argv)
    harness.print_postgres_header("PostgreSQL search", args.server)
    print()
    with (
        harness.scratch_database(args.server, "transcripts_search_bench_") as url,
        TranscriptStore.open(url) as store,
    ):
        return run(store, args)


def run(store: TranscriptStore, args: argparse.Namespace) -> int:
    """Store the messages, time the three searches, then a rebuild; print the table."""
    rng = random.Random(7)
    for session in range(args.messages // 1000):
        store.start(f"s{session}")
        messages = []
        for n in range(1000):
            words = [VERY_COMMON, *([COMMON] if n % 4 == 0 else [])]
            words += [RARE] if session == 0 and n % 250 == 0 else []
            text = " ".join([*words, *rng.choices(WORDS, k=60)])[:400]
            messages.append({"role": "user", "content": text})
        store.append(f"s{session}", messages)
    queries = {"rare": RARE, "common": COMMON, "very common": VERY_COMMON}
    matches = {label: _count(store, query) for label, query in queries.items()}
    searches = {
        label: harness.same_call(functools.partial(store.search, query))
        for label, query in queries.items()
    }
    samples = harness.run_rounds(searches, args.repeats, 1, rng)
    medians = {label: statistics.median(harness.flatten(samples[label])) for label in queries}
    baseline = medians["rare"]
    print(f"{'search':<14} {'matches':>8} {'ms':>8} {'× rare':>8}")
    for label in queries:
        median = medians[label]
        print(f"{label:<14} {matches[label]:>8,} {median * 1000:>8.1f} {median / baseline:>8.1f}")
    started = time.perf_counter()
    store.rebuild_projections()
    print(f"rebuild of {args.messages:,} messages: {time.perf_counter() - started:.1f} s")
    return 0


def _count(store: TranscriptStore, query: str) -> int:
    """How many messages match `query`."""
    return len(store.search(query, limit=100_000))


if __name__ == "__main__":
    sys.exit(main())
