"""Peers benchmark: our store beside the stores an agent author would pick instead, as ratios.

    python benchmarks/peers.py --quick                      # ~1.5 min, SQLite only
    python benchmarks/peers.py --postgres postgresql://postgres@127.0.0.1:5432/ts_peers
                                                            # ~12 min (--quick: ~4)
    python benchmarks/peers.py --only turn --rounds 3       # seconds
    python benchmarks/peers.py --help

Run it in the venv of benchmarks/requirements-peers.txt (the peers from PyPI). A peer whose
import fails is reported and skipped.

The peers, each driven through its own public API (async APIs on one event loop per store;
no network, no model): the OpenAI Agents SDK's `SQLiteSession` (and `SQLAlchemySession` on
PostgreSQL), LangChain's `SQLChatMessageHistory`, the Hermes agent's `SessionDB`, and a plain
table of mutable rows (sqlite3 or psycopg) for issue 13's compaction target. Each runs at
its shipped settings, read back from its own connection and printed; a peer shipped below
the matched durability (SQLite: WAL, synchronous=FULL; PostgreSQL: synchronous_commit on)
runs a second time at it. Ours runs at its default, durability "full".

Operations (`--only NAME`, repeatable), 400-character messages; a peer's "context" is what
its API gives an agent to send: the latest N by a limit where it reads with one (the Agents
SDK: `get_items(limit=50)`), else its active messages, kept at N by its own compaction:

  turn        append one message, then read the context of 50, in a 1,000-message session
  append      one append (one message, one call) to a short session
  append-10k  one append to a session of 10,000 messages
  resume      load the context of 50 of a 10,000-message session
  load-all    load a context of 10,000 messages
  compact     replace a context of 10,000 by a summary and the last 49, as the store's API
              offers it (printed); a new 10,000-message session every round
  bulk        10,000 messages appended in calls of 100 (a new session every round)
  bulk-read   the same, reading the whole context after each call

Hermes is left out of the bulk appends (its API appends one message per transaction), and
`--quick` (at most 5 rounds, 2 for compact and bulk, half the calls) leaves LangChain out of
bulk-read (its reads of thousands of messages take a minute a round); each says so.

Every operation runs in new databases (SQLite: a directory per operation; PostgreSQL: a
database per operation beside the --postgres one, dropped afterwards). The variants are timed
in interleaved rounds (their order shuffled every round); each ratio is the median of the
per-round ratios ours / peer of per-round medians: below 1.0 ours is faster.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness
from peer_operations import CHARS, OPERATIONS, Operation
from peer_stores import (
    MATCHED_SQLITE,
    Adapter,
    AgentsSQLAlchemySession,
    AgentsSQLiteSession,
    HermesSessionDB,
    LangChainSQL,
    OurStore,
    sqlalchemy_url,
)
from plain_rows import PlainPostgres, PlainSQLite

OURS = "ours"
PACKAGES = ("openai-agents", "langchain-community", "SQLAlchemy", "hermes-agent", "eventsourcing")

# -- the peers ------------------------------------------------------------------------------

Place = Any  # a directory (SQLite) or a database URL (PostgreSQL)


@dataclass(frozen=True)
class Peer:
    """A store to measure: its short label and how to open it, shipped or matched."""

    label: str
    open: Callable[[Place, bool], Adapter]  # (place, matched durability) -> adapter
    can_match: bool = False  # whether `open(place, True)` changes its durability


SQLITE_PEERS = (
    Peer("SQLiteSession", lambda d, _: AgentsSQLiteSession(d / "agents.db")),
    Peer("LangChain", lambda d, wal: LangChainSQL(f"sqlite:///{d / 'langchain.db'}", wal), True),
    Peer("Hermes", lambda d, _: HermesSessionDB(d / "hermes.db")),
    Peer("plain sqlite3", lambda d, _: PlainSQLite(d / "plain.db")),
)
POSTGRES_PEERS = (
    Peer("SQLAlchemySession", lambda url, _: AgentsSQLAlchemySession(url)),
    Peer("LangChain", lambda url, _: LangChainSQL(sqlalchemy_url(url, "psycopg"))),
    Peer("plain psycopg", lambda url, _: PlainPostgres(url)),
)


def is_matched(pragmas: dict[str, str]) -> bool:
    """Whether settings read back are the matched durability."""
    if "synchronous_commit" in pragmas:
        return pragmas["synchronous_commit"] == "on"
    return all(pragmas.get(name) == value for name, value in MATCHED_SQLITE.items())


@dataclass(frozen=True)
class Variant:
    """One column of the tables: a peer at one durability (as read back)."""

    label: str
    peer: Peer
    matched: bool
    durability: str


def survey(
    peers: tuple[Peer, ...], place: Place, ours: Callable[[Place], Adapter]
) -> list[Variant]:
    """Open every peer shipped (and matched where it ships below), print the settings read
    back from its connection and how it replaces a history; the variants to measure."""
    print(f"{'store':44} {'durability read back':44} matched")
    adapter = ours(place)
    pragmas = adapter.pragmas()
    print(f"{'ours (' + adapter.name + ')':44} {show(pragmas):44} {yes(is_matched(pragmas))}")
    compactions = [(OURS, adapter.compaction)]
    adapter.close()
    variants = [Variant(OURS, Peer(OURS, lambda where, _: ours(where)), True, show(pragmas))]
    for peer in peers:
        try:
            adapter = peer.open(place, False)
        except ImportError as error:
            print(f"{peer.label:44} skipped: {error}")
            continue
        pragmas, name = adapter.pragmas(), adapter.name
        compactions.append((peer.label, adapter.compaction))
        adapter.close()
        matched = is_matched(pragmas)
        print(f"{name + ' (shipped)':44} {show(pragmas):44} {yes(matched)}")
        variants.append(Variant(peer.label, peer, False, show(pragmas)))
        if not matched and peer.can_match:
            adapter = peer.open(place, True)
            pragmas = adapter.pragmas()
            adapter.close()
            print(f"{name + ' (matched)':44} {show(pragmas):44} {yes(is_matched(pragmas))}")
            variants.append(Variant(f"{peer.label} WAL", peer, True, show(pragmas)))
    print("\nhow each replaces a history (compact):")
    for label, how in compactions:
        print(f"  {label:18} {how}")
    return variants


def show(pragmas: dict[str, str]) -> str:
    """'journal_mode=wal, synchronous=FULL'."""
    return ", ".join(f"{name}={value}" for name, value in pragmas.items())


def yes(matched: bool) -> str:
    """'yes' or 'no'."""
    return "yes" if matched else "no"


# -- running --------------------------------------------------------------------------------

Results = dict[str, harness.Samples]  # per operation, per variant label


@dataclass
class Backend:
    """Where the stores live: a place per operation, ours and the peers' variants."""

    name: str
    places: Callable[[], Any]  # a context manager yielding a new place
    variants: list[Variant]  # ours first


def measure(
    backend: Backend, operation: Operation, rounds: int, rng: random.Random, quick: bool
) -> harness.Samples:
    """Open every variant in a new place, prepare each, run the interleaved rounds."""
    calls = max(1, operation.calls // 2) if quick else operation.calls
    if operation.fresh:
        rounds = max(2, rounds // 5)
    with backend.places() as place:
        adapters: dict[str, Adapter] = {}
        try:
            for variant in backend.variants:
                adapter = variant.peer.open(place, variant.matched)
                adapters[variant.label] = adapter
                reason = operation.skip(adapter, quick)
                if reason:
                    print(f"  {variant.label}: not measured, {reason}")
                    adapter.close()
                    del adapters[variant.label]
            setups = {label: operation.prepare(a) for label, a in adapters.items()}
            if not operation.fresh:
                harness.warm_up(setups, 2)
            return harness.run_rounds(setups, rounds, calls, rng)
        finally:
            for adapter in adapters.values():
                adapter.close()


def report(operation: Operation, samples: harness.Samples) -> None:
    """Per variant: the median µs of its calls, and the ratio ours / it with its IQR."""
    rounds = len(samples[OURS])
    print(f"\n{operation.name}: {operation.what} ({rounds} rounds x "
          f"{len(samples[OURS][0])} calls)")  # fmt: skip
    print(f"  {'variant':20} {'median µs':>12} {'ours / it':>10} {'IQR of rounds':>15}")
    for label, per_round in samples.items():
        line = f"  {label:20} {harness.micros(statistics.median(harness.flatten(per_round))):>12}"
        if label != OURS:
            ratios = harness.round_ratios(samples, OURS, label)
            low, high = harness.quartiles(ratios)
            line += f" {statistics.median(ratios):>10.2f} {f'{low:.2f}–{high:.2f}':>15}"
        print(line)


def summary(backend: Backend, results: Results) -> None:
    """The ratios ours / peer of every operation, one row each; the durability of each."""
    labels = [variant.label for variant in backend.variants if variant.label != OURS]
    print(f"\n{backend.name}: ratios ours / peer (median of per-round ratios; < 1: ours faster)")
    print(f"  {'operation':12} {'ours µs':>10} " + " ".join(f"{label:>17}" for label in labels))
    for name, samples in results.items():
        ours = harness.micros(statistics.median(harness.flatten(samples[OURS])))
        cells = [
            f"{statistics.median(harness.round_ratios(samples, OURS, label)):.2f}"
            if label in samples
            else "—"
            for label in labels
        ]
        print(f"  {name:12} {ours:>10} " + " ".join(f"{cell:>17}" for cell in cells))
    print("durability, as read back:")
    for variant in backend.variants:
        print(f"  {variant.label:18} {variant.durability}")


def run_backend(backend: Backend, args: argparse.Namespace, rng: random.Random) -> Results:
    """Every chosen operation on `backend`, reported as it ends."""
    results: Results = {}
    for name in args.only or OPERATIONS:
        operation = OPERATIONS[name]
        started = time.perf_counter()
        results[name] = measure(backend, operation, args.rounds, rng, args.quick)
        report(operation, results[name])
        print(f"  ({time.perf_counter() - started:.0f} s)")
    summary(backend, results)
    return results


def sqlite_backend(directory: Path) -> Backend:
    """Stores in new subdirectories of `directory`."""
    numbers = iter(range(1_000_000))

    @contextmanager
    def places() -> Iterator[Path]:
        place = directory / f"op{next(numbers)}"
        place.mkdir()
        yield place

    def ours(place: Path) -> Adapter:
        return OurStore(f"sqlite:///{place / 'ours.db'}")

    with places() as place:
        return Backend("SQLite", places, survey(SQLITE_PEERS, place, ours))


def postgres_backend(server: str) -> Backend:
    """Stores in new databases beside `server`'s, dropped afterwards."""

    def places() -> Any:
        return harness.scratch_database(server, prefix="transcripts_peers_")

    with places() as url:
        return Backend("PostgreSQL", places, survey(POSTGRES_PEERS, url, OurStore))


def main(argv: list[str] | None = None) -> int:
    parser = harness.new_parser(__doc__)
    harness.add_count(parser, "--rounds", 15, "interleaved rounds (a fifth for compact, bulk)")
    only = "run this operation only (repeatable)"
    parser.add_argument("--only", action="append", choices=list(OPERATIONS), help=only)
    postgres = "also on PostgreSQL: a database on the server (more are made beside it)"
    parser.add_argument("--postgres", metavar="URL", help=postgres)
    quick = "at most 5 rounds, half the calls (~1.5 min on SQLite)"
    parser.add_argument("--quick", action="store_true", help=quick)
    harness.add_scratch_options(parser)
    harness.add_seed_option(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds = min(args.rounds, 5)
    rng = random.Random(args.seed)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message=".*sunset.*")

    def run(args: argparse.Namespace, directory: Path) -> int:
        print(harness.title("peers", PACKAGES))
        harness.print_directory(directory, f"messages ~{CHARS} chars")
        print()
        started = time.perf_counter()
        run_backend(sqlite_backend(directory), args, rng)
        if args.postgres:
            print()
            harness.print_postgres_header("peers", args.postgres)
            run_backend(postgres_backend(args.postgres), args, rng)
        else:
            print("\nPostgreSQL: not run (give --postgres URL)")
        print(f"\ntotal {time.perf_counter() - started:.0f} s")
        return 0

    return harness.run_in_scratch_directory(args, run)


if __name__ == "__main__":
    sys.exit(main())
