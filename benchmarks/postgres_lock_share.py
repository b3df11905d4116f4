"""PostgreSQL benchmark: the share of an append spent holding a lock that writers of other
sessions wait for, and the ceiling it puts on writers to different sessions (Amdahl).

    python benchmarks/postgres_lock_share.py                   # ~2 min; prints two tables
    python benchmarks/postgres_lock_share.py --server postgresql://postgres@127.0.0.1:5432/postgres

Needs a PostgreSQL server where the user may create databases (`--server`, else
$TRANSCRIPTS_TEST_POSTGRES_URL, else postgresql://postgres@127.0.0.1:5432/postgres); each
run is in a fresh database, dropped afterwards.

Two ways of locking, run one after the other. "table lock": as the release before, every
write transaction takes `LOCK TABLE transcripts_events IN EXCLUSIVE MODE` with its first
statements and holds it to its COMMIT, so writers of every session take turns. "stream
lock": as the store ships, a write takes its session's advisory lock (and the table in ROW
EXCLUSIVE mode, which writers do not wait for each other for). N writer processes (1, 2, 4,
8) each append one message per call to their own session for `--seconds`. Each times its
appends and, inside them, its log write transactions (from the first statement to the end
of COMMIT). With the table lock, the whole transaction holds the lock: f = time in the
transaction / time in `append`, with one writer; Amdahl's ceiling on N writers is 1 / (f +
(1 - f) / N). For both, the server is sampled every few milliseconds during the run
(`pg_stat_activity` of the run's database): the share of its busy writer backends that are
waiting for a heavyweight lock (`wait_event_type = 'Lock'`: the table, an advisory lock, a
transaction, NOTIFY's queue at commit), the measure of writers waiting for each other. On a
machine of few cores the processes share the CPU with the server, so throughput falls short
of any ceiling for that reason too.
"""

from __future__ import annotations

import collections
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import harness
import psycopg

from transcripts import TranscriptStore
from transcripts.adapters.storage.postgres import transactions

SAMPLE_INTERVAL = 0.005  # seconds between samples of the server's activity

WRITERS = (1, 2, 4, 8)


def writer(
    url: str, session: str, locked: bool, barrier: Any, seconds: float, results: Any
) -> None:
    """Append to `session` for `seconds` (`locked`: with the table lock, as the release
    before); put (appends, seconds appending, seconds in the log's write transactions)."""
    if locked:
        transactions.lock_statements = lambda recorder, stream: [  # type: ignore[assignment]
            (statement, None) for statement in recorder.lock_table_statements
        ]
    with TranscriptStore.open(url) as store:
        backend = store._log.backend
        in_transaction = [0.0]
        writing = backend.writing

        @contextmanager
        def timed_writing(log: Any, stream: Any = None) -> Iterator[Any]:
            began = time.perf_counter()
            try:
                with writing(log, stream) as tx:
                    yield tx
            finally:
                in_transaction[0] += time.perf_counter() - began

        backend.writing = timed_writing  # type: ignore[method-assign]
        store.start(session)
        for number in range(20):  # warm: the cache, the pool, prepared statements
            store.append(session, [{"role": "user", "content": f"warm-up {number}"}])
        in_transaction[0] = 0.0
        barrier.wait()
        count, appending = 0, 0.0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            began = time.perf_counter()
            store.append(session, [{"role": "user", "content": f"message {count}"}])
            appending += time.perf_counter() - began
            count += 1
        results.put((count, appending, in_transaction[0]))


def run(
    server: str, writers: int, seconds: float, locked: bool
) -> tuple[float, float, float, float, dict[str, int]]:
    """(appends per second, all writers together; ms in a log transaction per append; share
    of append time in a log transaction; share of busy writer backends waiting for a lock;
    the samples of each lock waited for)."""
    with harness.scratch_database(server) as url:
        running = harness.WriterProcesses.start(writer, writers, url, locked, seconds)
        stop = threading.Event()
        samples: collections.Counter[str] = collections.Counter()
        sampler = threading.Thread(target=sample, args=(url, stop, samples))
        running.barrier.wait()
        sampler.start()
        try:
            outcomes = running.outcomes(timeout=seconds + 120)
        finally:
            stop.set()
            sampler.join()
    appends = sum(count for count, _, _ in outcomes)
    held = sum(held for _, _, held in outcomes)
    share = held / sum(spent for _, spent, _ in outcomes)
    locks = {kind: n for kind, n in samples.items() if kind.startswith("Lock:")}
    waiting = sum(locks.values()) / max(1, sum(samples.values()))
    return appends / seconds, held / appends * 1e3, share, waiting, locks


def sample(url: str, stop: threading.Event, samples: collections.Counter[str]) -> None:
    """Count the busy backends of `url`'s database (but this one) by what they wait for
    ("type:event", ":" for nothing: running), every `SAMPLE_INTERVAL`, until `stop` is
    set."""
    with psycopg.connect(url, autocommit=True) as connection:
        while not stop.wait(SAMPLE_INTERVAL):
            rows = connection.execute(
                "SELECT COALESCE(wait_event_type, '') || ':' || COALESCE(wait_event, '') "
                "FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND state = 'active' AND backend_type = 'client backend'"
            ).fetchall()
            samples.update(kind for (kind,) in rows if not kind.startswith("Client:"))


def main(argv: list[str] | None = None) -> int:
    """Parse the options; print the header and the tables."""
    parser = harness.new_parser(__doc__)
    harness.add_server_option(parser)
    parser.add_argument("--seconds", type=float, default=5.0, help="per run")
    args = parser.parse_args(argv)

    harness.print_postgres_header("PostgreSQL lock share", args.server)
    print("With the table lock (as the release before)")
    f = print_runs(args.server, args.seconds, locked=True)
    print(f"f = {f:.2f} (one writer): any number of writers <= {1 / f:.2f}x one writer")
    print("\nWith the stream lock (as the store ships): no lock shared between sessions")
    print_runs(args.server, args.seconds, locked=False)
    return 0


def print_runs(server: str, seconds: float, *, locked: bool) -> float:
    """A line per number of writers; return the share in a transaction with one (f)."""
    print(
        f"{'writers':>7} {'appends/s':>10} {'x one':>7} {'ms in tx':>9} {'share in tx':>12} "
        f"{'Amdahl ceiling':>15} {'waiting on a lock':>18}"
    )
    rates: dict[int, float] = {}
    f = 1.0
    for writers in WRITERS:
        rate, held_ms, share, waiting, locks = run(server, writers, seconds, locked)
        rates[writers] = rate
        if writers == 1:
            f = share
        ceiling = f"{1 / (f + (1 - f) / writers):.2f}x" if locked else "-"
        print(
            f"{writers:>7} {rate:>10.0f} {rate / rates[1]:>6.2f}x {held_ms:>9.2f} "
            f"{share:>12.2f} {ceiling:>15} {waiting:>18.2f}  "
            + ", ".join(f"{kind[5:]} {n}" for kind, n in sorted(locks.items())),
            flush=True,
        )
    return f


if __name__ == "__main__":
    sys.exit(main())
