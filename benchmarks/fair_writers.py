"""Fairness benchmark: many processes appending to ONE session, on SQLite and PostgreSQL.

    python benchmarks/fair_writers.py                     # 60 s per backend, 8 writers
    python benchmarks/fair_writers.py --seconds 5 --compactor
    python benchmarks/fair_writers.py --backend sqlite --processes 4
    python benchmarks/fair_writers.py --help

(1) Fairness. `--processes` (8) writer processes, started together by a barrier, append to
    one session for `--seconds` (60), one message per `store.append` in a tight loop (an
    agent flushing after every turn). With `--compactor`, one more process compacts the
    session every `--compact-every` seconds (keeping the last two messages). Per process:
    calls made, its share of all calls, append latency p50 / p99 / max (ms), and errors
    (calls that raised, by type). Headline: min share / max share (1.0 = perfectly fair;
    with 8 processes an even share is 12.5 %).
(2) A second process's append while one appends in a tight loop. One hot writer appends to
    the session in a loop; one cold writer appends once every `--cold-interval` (100 ms)
    for `--cold-seconds` (10). The cold writer's latency p50 / p99 / max and its errors,
    against the lock timeout (a cold append that fails has waited the whole timeout).

SQLite: a store file in a new scratch directory (`--dir`; removed unless `--keep`).
PostgreSQL: a fresh database on `--server` (default $TRANSCRIPTS_TEST_POSTGRES_URL, else
postgresql://postgres@127.0.0.1:5432/postgres) per scenario, dropped afterwards; a server
that cannot be reached skips the backend with a note (`--backend postgres` makes it fatal).
`--lock-timeout` is passed to every store (default: the store's, 30 s).

The processes themselves are in writer_processes.py; this script starts them and reports.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import sqlite3
import sys
from pathlib import Path

import harness
from writer_processes import COMPACTOR, Outcome, cold_writer, compactor, hot_writer, writer

from transcripts import TranscriptStore
from transcripts.config import DEFAULT_LOCK_TIMEOUT

# -- scenarios -------------------------------------------------------------------------------


def fairness(url: str, args: argparse.Namespace) -> list[Outcome]:
    """(1): the writers (and the compactor) on the store at `url`; their outcomes, in order."""
    context = mp.get_context("spawn")
    parties = args.processes + (1 if args.compactor else 0)
    barrier = context.Barrier(parties)
    results = context.Queue()
    processes = [
        context.Process(
            target=writer,
            args=(url, f"writer-{i + 1}", args.lock_timeout, barrier, args.seconds, results),
        )
        for i in range(args.processes)
    ]
    if args.compactor:
        processes.append(
            context.Process(
                target=compactor,
                args=(url, args.lock_timeout, barrier, args.seconds, args.compact_every, results),
            )
        )
    for process in processes:
        process.start()
    wait = args.seconds + (args.lock_timeout or DEFAULT_LOCK_TIMEOUT) + 120
    outcomes = [results.get(timeout=wait) for _ in processes]
    for process in processes:
        process.join(30)
    return sorted(outcomes, key=lambda o: (o.name == COMPACTOR, _number(o.name)))


def _number(name: str) -> int:
    """The number that ends a writer's name ('writer-3': 3); 0 for none."""
    tail = name.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def cold_and_hot(url: str, args: argparse.Namespace) -> tuple[Outcome, Outcome]:
    """(2): a hot writer and a cold one on the store at `url`; (cold outcome, hot outcome)."""
    context = mp.get_context("spawn")
    ready, stop = context.Event(), context.Event()
    results = context.Queue()
    hot = context.Process(target=hot_writer, args=(url, args.lock_timeout, ready, stop, results))
    cold = context.Process(
        target=cold_writer,
        args=(url, args.lock_timeout, ready, args.cold_seconds, args.cold_interval, results),
    )
    hot.start()
    cold.start()
    wait = args.cold_seconds + (args.lock_timeout or DEFAULT_LOCK_TIMEOUT) + 120
    first = results.get(timeout=wait)  # the cold writer ends first
    stop.set()
    second = results.get(timeout=wait)
    for process in (hot, cold):
        process.join(30)
    by_name = {first.name: first, second.name: second}
    return by_name["cold writer"], by_name["hot writer"]


# -- reporting -------------------------------------------------------------------------------


def ms(values: list[float], p: float | None) -> str:
    """The `p`th percentile of `values` (seconds; None: the max) in ms; '-' for none."""
    if not values:
        return "-"
    value = max(values) if p is None else harness.percentile(values, p)
    return f"{value * 1e3:,.1f}"


def errors_text(outcome: Outcome) -> str:
    """How many calls raised, and the two most common errors."""
    if not outcome.errors:
        return "0"
    total = sum(outcome.errors.values())
    worst = ", ".join(f"{n}x {key}" for key, n in outcome.errors.most_common(2))
    return f"{total} ({worst})"


def report_fairness(backend: str, outcomes: list[Outcome], args: argparse.Namespace) -> None:
    """(1)'s table: a row per process; the headline, min share / max share."""
    writers = [o for o in outcomes if o.name != COMPACTOR]
    total = sum(o.calls for o in writers) or 1
    print(
        f"\n(1) {backend}: {len(writers)} processes appending to one session for "
        f"{args.seconds:g} s{' + a compactor' if args.compactor else ''}"
    )
    print(
        f"{'process':<11} {'calls':>8} {'share':>7} {'p50 ms':>9} {'p99 ms':>9} "
        f"{'max ms':>9}  errors"
    )
    for o in writers:
        print(
            f"{o.name:<11} {o.calls:>8,} {o.calls / total:>7.1%} {ms(o.latencies, 50):>9} "
            f"{ms(o.latencies, 99):>9} {ms(o.latencies, None):>9}  {errors_text(o)}"
        )
    for o in outcomes:
        if o.name == COMPACTOR:
            failed = ", ".join(f"{n} {code}" for code, n in o.failed.items()) or "none failed"
            print(
                f"{'compactor':<11} {o.calls:>8,} {'':>7} {ms(o.latencies, 50):>9} "
                f"{ms(o.latencies, 99):>9} {ms(o.latencies, None):>9}  {errors_text(o)}; "
                f"{o.committed} committed, {failed}"
            )
    shares = [o.calls / total for o in writers]
    ratio = min(shares) / max(shares) if max(shares) else 0.0
    print(
        f"headline: min share / max share = {min(shares):.1%} / {max(shares):.1%} = "
        f"{ratio:.3f} (1.0 is fair; even share {1 / len(writers):.1%}); "
        f"{total / args.seconds:,.0f} appends/s in all; "
        f"{sum(sum(o.errors.values()) for o in writers):,} appends raised"
    )


def report_cold(backend: str, cold: Outcome, hot: Outcome, args: argparse.Namespace) -> None:
    """(2)'s table: the cold and the hot writer; the headline, the cold writer's latency."""
    timeout = args.lock_timeout if args.lock_timeout is not None else DEFAULT_LOCK_TIMEOUT
    print(
        f"\n(2) {backend}: a second process's append while one appends in a tight loop "
        f"(cold writer every {args.cold_interval * 1e3:g} ms for {args.cold_seconds:g} s; "
        f"lock timeout {timeout:g} s)"
    )
    print(
        f"{'process':<11} {'calls':>8} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9}  errors "
        "(ms until raised: p50 / max)"
    )
    for o in (cold, hot):
        raised = (
            f" ({ms(o.error_latencies, 50)} / {ms(o.error_latencies, None)})"
            if o.error_latencies
            else ""
        )
        print(
            f"{o.name:<11} {o.calls:>8,} {ms(o.latencies, 50):>9} {ms(o.latencies, 99):>9} "
            f"{ms(o.latencies, None):>9}  {errors_text(o)}{raised}"
        )
    every = cold.latencies + cold.error_latencies
    worst = max(every) if every else 0.0
    print(
        f"headline: cold append latency p50 {ms(cold.latencies, 50)} ms, p99 "
        f"{ms(cold.latencies, 99)} ms; {sum(cold.errors.values())} of {cold.calls} cold appends "
        f"failed; slowest cold call {worst:.2f} s = {worst / timeout:.0%} of the lock timeout"
    )


# -- main ------------------------------------------------------------------------------------


def run_sqlite(args: argparse.Namespace, directory: Path) -> int:
    """(1) and (2) on SQLite, each on its own store file in `directory`."""
    print(
        f"\nSQLite {sqlite3.sqlite_version}, files in {directory} "
        f"({harness.filesystem_of(directory)})"
    )
    url = f"sqlite:///{directory / 'fair.db'}"
    TranscriptStore.open(url).close()
    report_fairness("SQLite", fairness(url, args), args)
    url = f"sqlite:///{directory / 'cold.db'}"
    TranscriptStore.open(url).close()
    report_cold("SQLite", *cold_and_hot(url, args), args)
    return 0


def run_postgres(args: argparse.Namespace) -> int:
    """(1) and (2) on PostgreSQL, each in a fresh database; skipped if unreachable."""
    try:
        version = harness.server_version(args.server)
    except Exception as error:  # noqa: BLE001
        if args.backend == "postgres":
            raise
        print(f"\nPostgreSQL skipped: cannot reach the server: {error}")
        return 0
    print(f"\n{version}")
    with harness.scratch_database(args.server, "transcripts_fair_") as url:
        report_fairness("PostgreSQL", fairness(url, args), args)
    with harness.scratch_database(args.server, "transcripts_fair_") as url:
        report_cold("PostgreSQL", *cold_and_hot(url, args), args)
    return 0


def main() -> int:
    """Parse the options; print the header, then run each backend asked for."""
    parser = harness.new_parser(__doc__)
    parser.add_argument("--seconds", type=float, default=60.0, help="of appending (1); default 60")
    parser.add_argument("--processes", type=int, default=8, help="writer processes (1); default 8")
    parser.add_argument("--compactor", action="store_true", help="add a compacting process to (1)")
    parser.add_argument("--compact-every", type=float, default=1.0, help="seconds; default 1")
    parser.add_argument(
        "--cold-seconds", type=float, default=10.0, help="length of (2); default 10"
    )
    parser.add_argument("--cold-interval", type=float, default=0.1, help="seconds; default 0.1")
    parser.add_argument("--lock-timeout", type=float, default=None, help="default: the store's")
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    harness.add_server_option(parser)
    parser.add_argument("--dir", default=None, help="where the SQLite scratch directory goes")
    parser.add_argument("--keep", action="store_true", help="keep the SQLite files")
    args = parser.parse_args()
    if args.processes < 1 or args.seconds <= 0 or args.cold_seconds <= 0:
        parser.error("--processes, --seconds and --cold-seconds must be positive")

    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, {platform.platform()}; "
        f"transcript-store {harness.package_version('transcript-store')}, "
        f"eventsourcing {harness.package_version('eventsourcing')}"
    )
    status = 0
    if args.backend in ("sqlite", "both"):
        status |= harness.run_in_scratch_directory(args, run_sqlite)
    if args.backend in ("postgres", "both"):
        status |= run_postgres(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
