"""Crash safety with real processes (issue 6, "Crash safety (real processes)").

A writer child (support/programs/crash_writer.py) appends, syncs, compacts and rebuilds the
views of one session and reports each call on stdout once it returned. The parent SIGKILLs
it at a random point — armed after a random number of acknowledged calls of the kind under
test, it waits for the next such call to begin and kills it a random time into it (up to 1.5
times what such a call took so far) — then reopens the store and checks (`Ledger.check`):

- every append that returned is there, ids and contents;
- the log up to the last state the writer read back is unchanged, and after it lies at most
  the call in flight, whole (all of an append's messages or none, one compaction event);
- no compaction is half applied: each committed one's superseded messages are all inactive
  and marked with it, its added messages active or superseded later, the audit is the log's,
  and every acknowledged compaction is in the audit as acknowledged;
- no id twice; `PRAGMA integrity_check` is ok; `verify_projections()` is clean and every view
  is at the log head after the catch-up on open.

The runs of one workload share the store file, so each writer starts on the store its
predecessor left behind: 12 + 12 + 10 = 34 kill points. For the rebuilds, another session
holds 2,500 messages first, so that a rebuild projects several batches before its swap.
Six more kills land while a writer opens a new store file (creating its tables and views):
the file must open afterwards and take writes.

`TRANSCRIPTS_CRASH_SEED` changes the random points (the default is fixed, so CI is
repeatable); `TRANSCRIPTS_CRASH_RUNS=N` makes N times as many runs, for a longer search.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections import Counter
from pathlib import Path

import pytest

from support.crash import Ledger, start_writer
from support.processes import Child, Spawn
from transcripts import TranscriptStore

pytestmark = pytest.mark.slow

SEED = os.environ.get("TRANSCRIPTS_CRASH_SEED", "6")
SCALE = int(os.environ.get("TRANSCRIPTS_CRASH_RUNS", "1"))
SESSION = "crash"
WORKLOADS = {  # workload: (kind of call killed, runs)
    "appends": ("append", 12),
    "compactions": ("compact", 12),
    "rebuilds": ("rebuild", 10),
}
CREATE_RUNS = 6  # kills while a new store file is being created
FILLER = 2500  # messages of another session, so that a rebuild takes several batches


def kill_during(child: Child, target: str, rng: random.Random) -> list[dict]:
    """Kill the child a random time into a call of kind `target`; return what it printed."""
    arm_after = rng.randint(1, 6)
    durations: list[float] = []
    while True:
        line = child.line()
        if line.get("ack") == target:
            durations.append(line["elapsed"])
        if line.get("intent") == target and len(durations) >= arm_after:
            typical = statistics.median(durations)
            time.sleep(rng.uniform(0, 1.5 * typical))
            return child.kill()


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_a_killed_writer_loses_no_acknowledged_write_and_leaves_no_half_applied_compaction(
    workload: str, tmp_path: Path, spawn: Spawn
) -> None:
    kill_writers(workload, f"sqlite:///{tmp_path / 'store.db'}", spawn)


@pytest.mark.parametrize("workload", ["appends", "compactions"])
def test_a_killed_writer_at_normal_durability_loses_no_acknowledged_write_either(
    workload: str, tmp_path: Path, spawn: Spawn, monkeypatch: pytest.MonkeyPatch
) -> None:
    # synchronous=NORMAL gives up writes on power loss, not when a process dies.
    monkeypatch.setenv("TRANSCRIPTS_DURABILITY", "normal")  # the writers' too
    kill_writers(workload, f"sqlite:///{tmp_path / 'store.db'}", spawn)


def kill_writers(workload: str, url: str, spawn: Spawn) -> None:
    """Kill writers of `workload` one after another at random points of its calls; after
    each, check the store (`Ledger.check`)."""
    with TranscriptStore.open(url) as store:  # the file and its tables; the writers do the rest
        if workload == "rebuilds":
            store.start("filler")
            for start in range(0, FILLER, 500):
                batch = [{"role": "user", "content": f"filler {start + k}"} for k in range(500)]
                store.append("filler", batch)
    target, runs = WORKLOADS[workload]
    ledger = Ledger(SESSION)
    killed = Counter()
    for run in range(runs * SCALE):
        rng = random.Random(f"{SEED}-{workload}-{run}")
        child = start_writer(
            spawn, f"{workload}-{run}",
            "write", url, SESSION, f"r{run}", str(rng.randrange(2**32)), workload,
        )  # fmt: skip
        lines = kill_during(child, target, rng)
        ledger.record(lines)
        in_flight = ledger.in_flight["intent"] if ledger.in_flight else "nothing"
        killed[in_flight] += 1
        ledger.check(url)
    # Random delays within a call's usual duration land inside some of the calls.
    assert killed[target] >= 1, killed
    assert len(ledger.messages) > 0
    with TranscriptStore.open(url) as store:  # a last rebuild replaces any half-built views
        store.rebuild_projections()
        report = store.verify_projections()
        assert report.ok, [str(problem) for problem in report.problems]


def test_a_writer_killed_while_it_creates_the_store_leaves_a_file_that_opens_and_takes_writes(
    tmp_path: Path, spawn: Spawn
) -> None:
    rng = random.Random(f"{SEED}-create")
    # A first child runs to the end: how long opening a new store takes here.
    timing = f"sqlite:///{tmp_path / 'timing.db'}"
    first = start_writer(spawn, "create-timing", "create", timing, SESSION)
    while first.line().get("ack") != "append":
        pass
    (opening,) = [line["elapsed"] for line in first.kill() if line.get("ack") == "open"]
    for run in range(CREATE_RUNS):
        url = f"sqlite:///{tmp_path / f'store-{run}.db'}"
        child = start_writer(spawn, f"create-{run}", "create", url, SESSION)
        while child.line().get("intent") != "open":
            pass
        time.sleep(rng.uniform(0, 1.2 * opening))
        ledger = Ledger(SESSION)
        ledger.record(child.kill())
        ledger.check(url)  # opens; the first message is there if its append returned
        with TranscriptStore.open(url) as store:
            store.start(SESSION, source="crash-test")
            store.append(SESSION, [{"id": "first", "role": "user", "content": "the first message"}])
            assert [m["id"] for m in store.active(SESSION)] == ["first"]
            report = store.verify_projections()
            assert report.ok, [str(problem) for problem in report.problems]
