"""Encryption benchmark: what a cipher key costs, as ratios against a plain store.

    python benchmarks/encryption.py          # ~30 s; prints a table
    python benchmarks/encryption.py --help

Two SQLite stores in one directory, one plain and one encrypted (AES-256-GCM), filled alike.
Measured in one run, the two variants of each operation interleaved in rounds (their order
shuffled every round); each ratio is the median of the per-round ratios (encrypted / plain):

  (a) `append` of one message of `--chars` (1,000) characters to a session;
  (b) `active()` of a session of `--active` (50) messages (every row decrypted);
  (c) `rebuild_projections()` of `--sessions` (20) sessions of 500 messages.

The encrypted store encrypts every event and every content column of the views.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections.abc import Callable
from itertools import count
from pathlib import Path

from harness import make_message, micros, quartiles, round_ratios, run_in_scratch_directory, timed
from transcripts import TranscriptStore
from transcripts.config import new_cipher_key

PLAIN, ENCRYPTED = "plain", "encrypted"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--per-round", type=int, default=40, help="calls per variant per round")
    parser.add_argument("--chars", type=int, default=1000)
    parser.add_argument("--active", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--dir", default=None, help="where to make the stores")
    parser.add_argument("--keep", action="store_true", help="keep the stores")
    return run_in_scratch_directory(parser.parse_args(argv), run)


def run(args: argparse.Namespace, directory: Path) -> int:
    stores = {
        PLAIN: TranscriptStore.open(f"sqlite:///{directory / 'plain.db'}"),
        ENCRYPTED: TranscriptStore.open(
            f"sqlite:///{directory / 'encrypted.db'}", cipher_key=new_cipher_key()
        ),
    }
    try:
        for store in stores.values():
            fill(store, args)
        numbers = count()

        def append(store: TranscriptStore) -> Callable[[], object]:
            return lambda: store.append("writes", [make_message(args.chars, next(numbers))])

        def active(store: TranscriptStore) -> Callable[[], object]:
            return lambda: store.active("reads")

        def rebuild(store: TranscriptStore) -> Callable[[], object]:
            return store.rebuild_projections

        rows = [
            ("append, one message", append, args.per_round),
            (f"active(), {args.active} messages", active, args.per_round),
            (f"rebuild, {args.sessions * 500:,} messages", rebuild, 1),
        ]
        print(f"{'operation':<28} {'plain µs':>12} {'encrypted µs':>14} {'ratio':>7} {'IQR':>13}")
        for name, call, times in rows:
            plain, encrypted, ratio, (low, high) = measure(stores, call, times, args.rounds)
            print(
                f"{name:<28} {micros(plain):>12} {micros(encrypted):>14} {ratio:>7.2f} "
                f"{low:>6.2f}–{high:<6.2f}"
            )
    finally:
        for store in stores.values():
            store.close()
    return 0


def fill(store: TranscriptStore, args: argparse.Namespace) -> None:
    store.start("writes")
    store.start("reads")
    store.append("reads", [make_message(args.chars, n) for n in range(args.active)])
    for session in range(args.sessions):
        store.start(f"bulk-{session}")
        store.append(f"bulk-{session}", [make_message(args.chars, n) for n in range(500)])


def measure(
    stores: dict[str, TranscriptStore],
    call: Callable[[TranscriptStore], Callable[[], object]],
    times: int,
    rounds: int,
) -> tuple[float, float, float, tuple[float, float]]:
    samples: dict[str, list[list[float]]] = {PLAIN: [], ENCRYPTED: []}
    for _ in range(rounds):
        for variant in random.sample(list(stores), len(stores)):
            samples[variant].append(timed(call(stores[variant]), times))
    ratios = round_ratios(samples, ENCRYPTED, PLAIN)
    medians = {v: statistics.median(s for r in samples[v] for s in r) for v in samples}
    return medians[PLAIN], medians[ENCRYPTED], statistics.median(ratios), quartiles(ratios)


if __name__ == "__main__":
    sys.exit(main())
