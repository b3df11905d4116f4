"""PostgreSQL benchmark: append throughput with 1, 4 and 8 writer processes, and live lag.

    python benchmarks/postgres_writers.py                      # ~1 min; prints tables
    python benchmarks/postgres_writers.py --server postgresql://postgres@127.0.0.1:5432/postgres
    python benchmarks/postgres_writers.py --help

Needs a PostgreSQL server where the user may create databases (`--server`, else
$TRANSCRIPTS_TEST_POSTGRES_URL, else postgresql://postgres@127.0.0.1:5432/postgres); every
measurement runs in a fresh database, dropped afterwards.

(1) Throughput. N writer processes (N = 1, 4, 8) each append to their own session, one
    message per `store.append` (an agent's flush after a turn), all started together by a
    barrier, for `--seconds`; aggregate appends per second, and how many writers wait for
    the table lock at any moment (sampled from pg_locks). Every insert of the library's
    PostgreSQL recorder takes `LOCK TABLE transcripts_events IN EXCLUSIVE MODE` (so that
    notification ids commit in order) and holds it across two client round trips and the
    commit's WAL flush: all writers of a store take turns. Variants:
    - "store": as it ships. Target: 8 writers >= 2.5x one writer.
    - "no table lock": the recorder without its lock statement. For measurement only (it
      gives up the ordering followers rely on): what the machine's CPU allows.
    - "one-statement insert": the design the README proposes, prototyped here: the same
      lock, NOTIFY and INSERT in one server-side function called in its own transaction,
      so the lock is held only while the server works and flushes.
    - "one statement, no lock": its bound, for measurement only.
(2) Lock. The time the table lock is held per one-event insert (from LOCK TABLE to the end
    of COMMIT, timing the statements the recorder runs, one connection, no contention): the
    inverse is the most inserts per second all writers of one store can make together.
(3) Live projection lag. A follower process runs `transcripts projections follow`; a writer
    process appends one message at a time (`--lag-appends`), with 4 more writers appending
    to other sessions as load; an observer process polls `active_messages` with plain SQL.
    Lag = first time the observer sees the row - the time `append` returned (one machine,
    one clock); median and p99. The observer's poll interval (1 ms) bounds the resolution.
"""

from __future__ import annotations

import multiprocessing as mp
import statistics
import sys
import threading
import time
from typing import Any

import harness

from transcripts import TranscriptStore

TARGET_SCALING = 2.5
WRITERS = (1, 4, 8)


# -- throughput -------------------------------------------------------------------------------


STORE = "store"  # the store as it ships: the library's recorder
NO_LOCK = "no table lock"  # the recorder without its LOCK TABLE (measurement only)
ONE_STATEMENT = "one-statement insert"  # the design proposed in the README (prototype)
ONE_STATEMENT_NO_LOCK = "one statement, no lock"  # its bound (measurement only)
VARIANTS = (STORE, NO_LOCK, ONE_STATEMENT, ONE_STATEMENT_NO_LOCK)

# An insert as one statement in its own transaction: one round trip, and the table lock is
# held while the server inserts and flushes the commit, not across client round trips.
INSERT_FUNCTION = """
CREATE OR REPLACE FUNCTION transcripts_events_insert(events stored_event_uuid[], lock_ms int)
RETURNS SETOF bigint LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('lock_timeout', lock_ms || 'ms', true);
    {lock}
    NOTIFY transcripts_events;
    RETURN QUERY INSERT INTO transcripts_events
        (originator_id, originator_version, topic, state)
        SELECT originator_id, originator_version, topic, state FROM unnest(events)
        RETURNING notification_id;
END $$
"""
LOCK_STATEMENT = "LOCK TABLE transcripts_events IN EXCLUSIVE MODE;"


def use_insert_function(store: TranscriptStore) -> None:
    """Make `store` insert through `transcripts_events_insert` (one statement)."""
    recorder: Any = store._log.recorder

    def insert_events(stored_events: Any, **_: Any) -> list[int]:
        rows = [
            recorder.construct_pg_stored_event(
                e.originator_id, e.originator_version, e.topic, e.state
            )
            for e in stored_events
        ]
        with recorder.datastore.get_connection() as connection, connection.cursor() as cursor:
            cursor.execute(
                "SELECT * FROM transcripts_events_insert(%s, %s)", (rows, 30_000), prepare=True
            )
            return [row["transcripts_events_insert"] for row in cursor.fetchall()]

    recorder.insert_events = insert_events


def writer(
    url: str,
    session: str,
    variant: str,
    barrier: Any,
    seconds: float,
    results: Any,
) -> None:
    """A writer process: append one message per call to `session` for `seconds`."""
    with TranscriptStore.open(url) as store:
        if variant == NO_LOCK:
            store._log.recorder.lock_table_statements = []  # type: ignore[attr-defined]
        elif variant in (ONE_STATEMENT, ONE_STATEMENT_NO_LOCK):
            use_insert_function(store)
        store.start(session)
        store.append(session, [{"role": "user", "content": "warm-up"}])
        barrier.wait()
        count = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            store.append(session, [{"role": "user", "content": f"message {count}"}])
            count += 1
        results.put(count)


def waiting_for_the_lock(url: str, stop: threading.Event, samples: list[int]) -> None:
    """Sample how many backends wait for the log's table lock, every 5 ms."""
    with harness.connect(url) as connection:
        while not stop.is_set():
            [(waiting,)] = connection.execute(
                "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'relation' "
                "AND relation = 'transcripts_events'::regclass"
            ).fetchall()
            samples.append(waiting)
            time.sleep(0.005)


def throughput(server: str, writers: int, seconds: float, variant: str) -> tuple[float, float]:
    """(appends per second, mean number of writers waiting for the table lock)."""
    with harness.scratch_database(server) as url:
        if variant in (ONE_STATEMENT, ONE_STATEMENT_NO_LOCK):
            lock = LOCK_STATEMENT if variant == ONE_STATEMENT else ""
            harness.execute(url, INSERT_FUNCTION.replace("{lock}", lock))
        running = harness.WriterProcesses.start(writer, writers, url, variant, seconds)
        samples: list[int] = []
        stop = threading.Event()
        sampler = threading.Thread(target=waiting_for_the_lock, args=(url, stop, samples))
        running.barrier.wait()
        sampler.start()
        counts = running.outcomes(timeout=seconds + 120)
        stop.set()
        sampler.join()
    return sum(counts) / seconds, statistics.mean(samples) if samples else 0.0


# -- the lock ----------------------------------------------------------------------------------


def lock_hold(server: str, inserts: int = 500) -> tuple[float, float]:
    """(median ms the table lock is held per one-event insert, median ms of the commit):
    the statements the library's recorder runs for an insert, timed one after the other."""
    with harness.scratch_database(server) as url:
        with TranscriptStore.open(url) as store:
            store.start("probe")
            store.append("probe", [{"role": "user", "content": "x"}])
        held, commits = [], []
        with harness.connect(url) as connection:
            originator_id, topic, state = connection.execute(
                "SELECT originator_id, topic, state FROM transcripts_events "
                "WHERE originator_version = 2"
            ).fetchone()  # type: ignore[misc]
            for version in range(3, inserts + 3):
                began = time.perf_counter()
                with connection.transaction():
                    connection.execute("LOCK TABLE transcripts_events IN EXCLUSIVE MODE")
                    connection.execute("NOTIFY transcripts_events")
                    connection.execute(
                        "INSERT INTO transcripts_events "
                        "(originator_id, originator_version, topic, state) "
                        "VALUES (%s, %s, %s, %s)",
                        (originator_id, version, topic, state),
                    )
                    before_commit = time.perf_counter()
                ended = time.perf_counter()
                held.append((ended - began) * 1e3)
                commits.append((ended - before_commit) * 1e3)
    return statistics.median(held), statistics.median(commits)


# -- live lag --------------------------------------------------------------------------------


def follower(url: str, ready: Any, stop: Any) -> None:
    """A follower process: run the live projection until `stop` is set."""
    with TranscriptStore.open(url) as store:
        halt = threading.Event()
        with_follow = threading.Thread(target=store.follow_projections, args=(halt,))
        with_follow.start()
        ready.set()
        stop.wait()
        halt.set()
        with_follow.join()


def observer(url: str, session: str, expected: int, ready: Any, results: Any) -> None:
    """An observer process: when each message of `session` shows in active_messages."""
    seen: dict[str, float] = {}
    with harness.connect(url) as connection:
        ready.set()
        position = 0
        deadline = time.time() + 300
        while len(seen) < expected and time.time() < deadline:
            rows = connection.execute(
                "SELECT position, message_id FROM active_messages "
                "WHERE session_id = %s AND position > %s ORDER BY position",
                (session, position),
            ).fetchall()
            now = time.time()
            for row_position, message_id in rows:
                seen.setdefault(message_id, now)
                position = max(position, row_position)
            if not rows:
                time.sleep(0.001)
    results.put(seen)


def load_writer(url: str, session: str, stop: Any) -> None:
    """A load process: append to `session` until `stop` is set."""
    with TranscriptStore.open(url) as store:
        store.start(session)
        count = 0
        while not stop.is_set():
            store.append(session, [{"role": "user", "content": f"load {count}"}])
            count += 1


def lag(server: str, appends: int, load: int) -> list[float]:
    """Milliseconds from `append` returning to the row in active_messages, per append."""
    context = mp.get_context("spawn")
    with harness.scratch_database(server) as url:
        stop = context.Event()
        follower_ready, observer_ready = context.Event(), context.Event()
        results = context.Queue()
        with TranscriptStore.open(url) as store:
            store.start("lag")
        side = [
            context.Process(target=follower, args=(url, follower_ready, stop)),
            *(
                context.Process(target=load_writer, args=(url, f"load-{i}", stop))
                for i in range(load)
            ),
        ]
        watcher = context.Process(
            target=observer, args=(url, "lag", appends, observer_ready, results)
        )
        for process in [*side, watcher]:
            process.start()
        follower_ready.wait(60)
        observer_ready.wait(60)
        time.sleep(1.0)  # the load is running
        returned: dict[str, float] = {}
        with TranscriptStore.open(url) as store:
            for i in range(appends):
                message_id = f"lag-{i}"
                store.append("lag", [{"id": message_id, "role": "user", "content": "x"}])
                returned[message_id] = time.time()
                time.sleep(0.01)
        seen = results.get(timeout=300)
        stop.set()
        for process in [*side, watcher]:
            process.join(60)
    return [(seen[i] - returned[i]) * 1e3 for i in returned if i in seen]


def main(argv: list[str] | None = None) -> int:
    """Parse the options; print the header and the parts (1), (2) and (3); the exit code."""
    parser = harness.new_parser(__doc__)
    harness.add_server_option(parser)
    parser.add_argument("--seconds", type=float, default=5.0, help="per throughput run")
    harness.add_count(parser, "--lag-appends", 300, "appends timed for lag")
    harness.add_check_option(parser, "exit 1 if 8 writers < 2.5x one")
    args = parser.parse_args(argv)

    harness.print_postgres_header("PostgreSQL writers", args.server)
    scaling = print_throughput(args.server, args.seconds)
    print_lock_hold(args.server)
    print_lag(args.server, args.lag_appends)
    return 1 if args.check and scaling < TARGET_SCALING else 0


def print_throughput(server: str, seconds: float) -> float:
    """(1): every variant with 1, 4 and 8 writers; return the store's 8 writers / 1 writer."""
    print("\n(1) Aggregate append throughput, one message per append, distinct sessions")
    print(f"{'variant':<24} {'writers':>7} {'appends/s':>10} {'x one':>7} {'lock waiters':>13}")
    rates: dict[tuple[str, int], float] = {}
    for variant in VARIANTS:
        for writers in WRITERS:
            rate, waiting = throughput(server, writers, seconds, variant)
            rates[variant, writers] = rate
            print(
                f"{variant:<24} {writers:>7} {rate:>10.0f} "
                f"{rate / rates[variant, 1]:>6.2f}x {waiting:>13.2f}",
                flush=True,
            )
    print("(lock waiters: writers waiting for the table lock at any moment, 5 ms samples)")
    scaling = rates[STORE, 8] / rates[STORE, 1]
    verdict = "met" if scaling >= TARGET_SCALING else "MISSED"
    print(f"8 writers / 1 writer: {scaling:.2f}x (target >= {TARGET_SCALING}x: {verdict})")
    return scaling


def print_lock_hold(server: str) -> None:
    """(2): how long one insert holds the table lock, and the cap that follows."""
    held, commit = lock_hold(server)
    print("\n(2) The table lock, per one-event insert (held from LOCK TABLE to the end of COMMIT)")
    print(f"held {held:.3f} ms median, of which the commit (WAL flush) {commit:.3f} ms")
    print(f"cap if writers only ever waited for each other: {1000 / held:.0f} inserts/s")


def print_lag(server: str, appends: int) -> None:
    """(3): the live projection's lag, without and with 4 load writers."""
    print("\n(3) Live projection lag: append returned -> row in active_messages, other process")
    for load in (0, 4):
        lags = lag(server, appends, load)
        print(
            f"{load} load writers: median {statistics.median(lags):.1f} ms, p99 "
            f"{harness.percentile(lags, 99):.1f} ms, max {max(lags):.1f} ms ({len(lags)} appends)"
        )


if __name__ == "__main__":
    sys.exit(main())
