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

import harness
from transcripts import TranscriptStore
from transcripts.config import new_cipher_key

PLAIN, ENCRYPTED = "plain", "encrypted"


def main(argv: list[str] | None = None) -> int:
    parser = harness.new_parser(__doc__)
    harness.add_round_options(parser, rounds=15, batch=40, calls="calls", batch_flag="--per-round")
    harness.add_chars_option(parser, 1000)
    harness.add_count(parser, "--active", 50, "messages of the session active() reads")
    harness.add_count(parser, "--sessions", 20, "sessions of 500 messages to rebuild")
    harness.add_scratch_options(parser, "stores")
    return harness.run_in_scratch_directory(parser.parse_args(argv), run)


def run(args: argparse.Namespace, directory: Path) -> int:
    print(harness.title("encryption", ["eventsourcing", "cryptography"]))
    harness.print_directory(directory, f"message ~{args.chars} chars")
    print()
    rng = random.Random()
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

        def append(store: TranscriptStore) -> harness.Call:
            return lambda: store.append("writes", [harness.make_message(args.chars, next(numbers))])

        def active(store: TranscriptStore) -> harness.Call:
            return lambda: store.active("reads")

        def rebuild(store: TranscriptStore) -> harness.Call:
            return store.rebuild_projections

        rows = [
            ("append, one message", append, args.per_round),
            (f"active(), {args.active} messages", active, args.per_round),
            (f"rebuild, {args.sessions * 500:,} messages", rebuild, 1),
        ]
        print(f"{'operation':<28} {'plain µs':>12} {'encrypted µs':>14} {'ratio':>7} {'IQR':>13}")
        for name, call, times in rows:
            plain, encrypted, ratio, (low, high) = measure(stores, call, times, args.rounds, rng)
            print(
                f"{name:<28} {harness.micros(plain):>12} {harness.micros(encrypted):>14} "
                f"{ratio:>7.2f} {low:>6.2f}–{high:<6.2f}"
            )
    finally:
        for store in stores.values():
            store.close()
    return 0


def fill(store: TranscriptStore, args: argparse.Namespace) -> None:
    store.start("writes")
    store.start("reads")
    store.append("reads", [harness.make_message(args.chars, n) for n in range(args.active)])
    for session in range(args.sessions):
        store.start(f"bulk-{session}")
        store.append(f"bulk-{session}", [harness.make_message(args.chars, n) for n in range(500)])


def measure(
    stores: dict[str, TranscriptStore],
    call: Callable[[TranscriptStore], harness.Call],
    times: int,
    rounds: int,
    rng: random.Random,
) -> tuple[float, float, float, tuple[float, float]]:
    """Median seconds per call, plain and encrypted; the median and IQR of per-round ratios."""
    setups = {name: _setup(call, store) for name, store in stores.items()}
    samples = harness.run_rounds(setups, rounds, times, rng)
    ratios = harness.round_ratios(samples, ENCRYPTED, PLAIN)
    medians = {v: statistics.median(harness.flatten(samples[v])) for v in samples}
    return medians[PLAIN], medians[ENCRYPTED], statistics.median(ratios), harness.quartiles(ratios)


def _setup(
    call: Callable[[TranscriptStore], harness.Call], store: TranscriptStore
) -> harness.Setup:
    return lambda: call(store)


if __name__ == "__main__":
    sys.exit(main())
