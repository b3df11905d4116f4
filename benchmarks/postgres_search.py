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
import random
import statistics
import sys
import time
import uuid

import psycopg
from harness import timed
from transcripts import TranscriptStore
from transcripts.config import StoreConfig

WORDS = [f"w{n:04d}x" for n in range(5000)]
RARE, COMMON, VERY_COMMON = "albatross", "harbour", "lisbon"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True, help="a postgresql:// URL of the server")
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    location = StoreConfig.from_url(args.server).postgres
    assert location is not None
    name = f"transcripts_search_bench_{uuid.uuid4().hex[:8]}"
    admin = psycopg.connect(**location.connection_kwargs(), autocommit=True)
    admin.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    try:
        url = args.server.rsplit("/", 1)[0] + f"/{name}"
        with TranscriptStore.open(url) as store:
            return run(store, args)
    finally:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')  # type: ignore[arg-type]
        admin.close()


def run(store: TranscriptStore, args: argparse.Namespace) -> int:
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
    samples: dict[str, list[float]] = {label: [] for label in queries}
    matches = {label: _count(store, query) for label, query in queries.items()}
    for _ in range(args.repeats):
        for label in rng.sample(list(queries), len(queries)):
            samples[label] += timed(lambda q=queries[label]: store.search(q), 1)
    baseline = statistics.median(samples["rare"])
    print(f"{'search':<14} {'matches':>8} {'ms':>8} {'× rare':>8}")
    for label in queries:
        median = statistics.median(samples[label])
        print(f"{label:<14} {matches[label]:>8,} {median * 1000:>8.1f} {median / baseline:>8.1f}")
    started = time.perf_counter()
    store.rebuild_projections()
    print(f"rebuild of {args.messages:,} messages: {time.perf_counter() - started:.1f} s")
    return 0


def _count(store: TranscriptStore, query: str) -> int:
    return len(store.search(query, limit=100_000))


if __name__ == "__main__":
    sys.exit(main())
