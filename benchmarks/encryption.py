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
Operation = Callable[[TranscriptStore], harness.Call]  # a store -> the call to time on it


def main(argv: list[str] | None = None) -> int:
    """Parse the options; run in a scratch directory."""
    parser = harness.new_parser(__doc__)
    harness.add_round_options(parser, rounds=15, batch=40, calls="calls", batch_flag="--per-round")
    harness.add_chars_option(parser, 1000)
    harness.add_count(parser, "--active", 50, "messages of the session active() reads")
    harness.add_count(parser, "--sessions", 20, "sessions of 500 messages to rebuild")
    harness.add_scratch_options(parser, "stores")
    return harness.run_in_scratch_directory(parser.parse_args(argv), run)


def run(args: argparse.Namespace, directory: Path) -> int:
    """Fill a plain and an encrypted store alike, then measure and print each operation."""
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
        print(f"{'operation':<28} {'plain µs':>12} {'encrypted µs':>14} {'ratio':>7} {'IQR':>13}")
        for name, call, times in operations(args):
            plain, encrypted, ratio, (low, high) = measure(stores, call, times, args.rounds, rng)
            print(
                f"{name:<28} {harness.micros(plain):>12} {harness.micros(encrypted):>14} "
                f"{ratio:>7.2f} {low:>6.2f}–{high:<6.2f}"
            )
    finally:
        for store in stores.values():
            store.close()
    return 0


def operations(args: argparse.Namespace) -> list[tuple[str, Operation, int]]:
    """(name, the call to time on a store, calls per round) of (a), (b) and (c)."""
    numbers = count()

    def append(store: TranscriptStore) -> harness.Call:
        return lambda: store.append("writes", [harness.make_message(args.chars, next(numbers))])

    def active(store: TranscriptStore) -> harness.Call:
        return lambda: store.active("reads")

    def rebuild(store: TranscriptStore) -> harness.Call:
        return store.rebuild_projections

    return [
        ("append, one message", append, args.per_round),
        (f"active(), {args.active} messages", active, args.per_round),
        (f"rebuild, {args.sessions * 500:,} messages", rebuild, 1),
    ]


def fill(store: TranscriptStore, args: argparse.Namespace) -> None:
    """Sessions to write to, to read (--active messages) and to rebuild (--sessions x 500)."""
    store.start("writes")
    store.start("reads")
    store.append("reads", [harness.make_message(args.chars, n) for n in range(args.active)])
    for session in range(args.sessions):
        store.start(f"bulk-{session}")
        store.append(f"bulk-{session}", [harness.make_message(args.chars, n) for n in range(500)])


def measure(
    stores: dict[str, TranscriptStore],
    call: Operation,
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


def _setup(call: Operation, store: TranscriptStore) -> harness.Setup:
    """A per-round setup: the operation's call on `store`."""
    return lambda: call(store)


if __name__ == "__main__":
    sys.exit(main())
