"""PostgreSQL benchmark: the share of an append spent holding the log's table lock, and the
ceiling it puts on writers to different sessions (Amdahl).

    python benchmarks/postgres_lock_share.py                   # ~1 min; prints a table
    python benchmarks/postgres_lock_share.py --server postgresql://postgres@127.0.0.1:5432/postgres

Needs a PostgreSQL server where the user may create databases (`--server`, else
$TRANSCRIPTS_TEST_POSTGRES_URL, else postgresql://postgres@127.0.0.1:5432/postgres); each
run is in a fresh database, dropped afterwards.

Every write transaction of the store takes `LOCK TABLE transcripts_events IN EXCLUSIVE
MODE` with its first statements and holds it to its COMMIT: writers of every session take
turns. N writer processes (1, 2, 4, 8) each append one message per call to their own
session for `--seconds`. Each times its appends and, inside them, its log write
transactions (from the first statement, which takes the lock, to the end of COMMIT: an
upper bound of the time the lock is held, by at most one round trip). f = time in the
transaction / time in `append`, measured with one writer (no waiting for the lock);
Amdahl's ceiling on N writers is 1 / (f + (1 - f) / N), and 1 / f for any number.
The measured throughput at N writers is shown beside it: on a machine of few cores the
processes also share the CPU with the server, so it falls short of the ceiling for that
reason too. Then the same runs without the table lock (measurement only: it gives up the
order of log positions that catch-up relies on; each session has one writer here, so no
write races another): what the machine allows once the lock is gone.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import harness

from transcripts import TranscriptStore

WRITERS = (1, 2, 4, 8)


def writer(
    url: str, session: str, locked: bool, barrier: Any, seconds: float, results: Any
) -> None:
    """Append to `session` for `seconds` (`locked`: with the table lock); put (appends,
    seconds appending, seconds in the log's write transactions)."""
    with TranscriptStore.open(url) as store:
        if not locked:
            store._log.recorder.lock_table_statements = []  # type: ignore[attr-defined]
        backend = store._log.backend
        in_transaction = [0.0]
        writing = backend.writing

        @contextmanager
        def timed_writing(log: Any) -> Iterator[Any]:
            began = time.perf_counter()
            try:
                with writing(log) as tx:
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


def run(server: str, writers: int, seconds: float, locked: bool) -> tuple[float, float, float]:
    """(appends per second, all writers together; ms in a log transaction per append; share
    of append time in a log transaction)."""
    with harness.scratch_database(server) as url:
        running = harness.WriterProcesses.start(writer, writers, url, locked, seconds)
        running.barrier.wait()
        outcomes = running.outcomes(timeout=seconds + 120)
    appends = sum(count for count, _, _ in outcomes)
    held = sum(held for _, _, held in outcomes)
    share = held / sum(spent for _, spent, _ in outcomes)
    return appends / seconds, held / appends * 1e3, share


def main(argv: list[str] | None = None) -> int:
    """Parse the options; print the header and the tables."""
    parser = harness.new_parser(__doc__)
    harness.add_server_option(parser)
    parser.add_argument("--seconds", type=float, default=5.0, help="per run")
    args = parser.parse_args(argv)

    harness.print_postgres_header("PostgreSQL table lock share", args.server)
    print("With the table lock (as the store ships)")
    f = print_runs(args.server, args.seconds, locked=True)
    print(f"f = {f:.2f} (one writer): any number of writers <= {1 / f:.2f}x one writer")
    print("\nWithout the table lock (measurement only: no ceiling from it)")
    print_runs(args.server, args.seconds, locked=False)
    return 0


def print_runs(server: str, seconds: float, *, locked: bool) -> float:
    """A line per number of writers; return the share in a transaction with one (f)."""
    print(
        f"{'writers':>7} {'appends/s':>10} {'x one':>7} {'ms in tx':>9} {'share in tx':>12} "
        f"{'Amdahl ceiling':>15}"
    )
    rates: dict[int, float] = {}
    f = 1.0
    for writers in WRITERS:
        rate, held_ms, share = run(server, writers, seconds, locked)
        rates[writers] = rate
        if writers == 1:
            f = share
        ceiling = f"{1 / (f + (1 - f) / writers):.2f}x" if locked else "-"
        print(
            f"{writers:>7} {rate:>10.0f} {rate / rates[1]:>6.2f}x {held_ms:>9.2f} "
            f"{share:>12.2f} {ceiling:>15}",
            flush=True,
        )
    return f


if __name__ == "__main__":
    sys.exit(main())
