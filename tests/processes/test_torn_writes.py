"""Torn writes (issue 6, "Crash safety (real processes)"): a store whose last write was torn
opens, and nothing committed before the tear is lost.

SQLite in WAL mode appends each transaction to the -wal file as frames, each with a
checksum chained to the frames before it; on open, recovery replays the frames up to the
last valid commit frame and ignores the rest. So a tear — the WAL cut short at any byte, or
its tail overwritten with garbage — can only drop transactions that end after it.

How it is tested: a writer child (support/programs/crash_writer.py `torn`) appends, and
after each append returned reports the WAL size, which is where that transaction ends in the
WAL (nothing else writes the file meanwhile). At a barrier the parent takes a consistent
copy of the store with the sqlite3 backup API (the baseline), optionally checkpoints the WAL
into the database file, lets the child append more and SIGKILLs it. Then, on copies of that
crash image, it tears the WAL at many offsets and opens each copy: it must open; every event
of the baseline must be there unchanged; every append whose transaction ended at or before
the tear must be there, and none that ended after it (except the call in flight, whole); the
views must verify clean and take new writes.

A second test kills a writer in the middle of WAL checkpoints (the copy of WAL frames into
the database file) and checks that everything acknowledged is still there.

The store has no API that says what it recovered (see the report of this change).
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import statistics
import time
from contextlib import closing
from pathlib import Path

import pytest

from support.crash import Ledger, start_writer
from support.processes import Spawn
from support.rows import log_rows
from transcripts import TranscriptStore

pytestmark = pytest.mark.slow

SEED = os.environ.get("TRANSCRIPTS_CRASH_SEED", "6")
SESSION = "torn"
TEARS = 12  # tear offsets tried on one crash image
WAL_HEADER = 32


def backup(source: Path, target: Path) -> None:
    """A consistent copy of a live database (the sqlite3 backup API)."""
    with closing(sqlite3.connect(source)) as live, closing(sqlite3.connect(target)) as copy:
        live.backup(copy)


def copy_image(image: Path, directory: Path) -> Path:
    directory.mkdir()
    for file in image.iterdir():
        shutil.copy2(file, directory / file.name)
    return directory / "store.db"


def tear(wal: Path, offset: int, how: str, rng: random.Random) -> None:
    """Cut the WAL at `offset`, or change every byte from there on to garbage (each byte
    changes: garbage equal to what was there would tear nothing)."""
    if how == "cut":
        os.truncate(wal, offset)
        return
    with wal.open("r+b") as file:
        file.seek(offset)
        tail = file.read()
        file.seek(offset)
        file.write(bytes(byte ^ rng.randint(1, 255) for byte in tail))


def durable_ledger(lines: list[dict], offset: int) -> tuple[Ledger, bool]:
    """What a tear at `offset` must keep: everything up to the baseline, and the acks of the
    appends after it whose transactions ended at or before the tear. Also whether the tear is
    past every acknowledged append (then the call in flight when the writer was killed may be
    there too, whole)."""
    barrier = next(i for i, line in enumerate(lines) if "baseline" in line) + 1
    before, after = lines[:barrier], lines[barrier:]
    states = [i for i, line in enumerate(after) if "state" in line]
    kept = [i for i in states if after[i]["wal"] <= offset]
    durable = before + after[: kept[-1] + 1] if kept else before
    past_all = kept == states
    if past_all:
        rest = after[kept[-1] + 1 :] if kept else after
        durable += [line for line in rest if "intent" in line][:1]
    ledger = Ledger(SESSION)
    ledger.record(durable)
    return ledger, past_all


def check_torn_copy(path: Path, baseline: list[tuple], lines: list[dict], offset: int) -> None:
    url = f"sqlite:///{path}"
    ledger, past_all = durable_ledger(lines, offset)
    ledger.check(url)  # opens; acked appends there; log prefix intact; views verify clean
    recovered = log_rows(f"sqlite:///{path}")
    assert recovered[: len(baseline)] == baseline, "the baseline lost or changed events"
    with TranscriptStore.open(url) as store:
        events = store.events(SESSION)
        if not past_all:  # appends that ended after the tear are gone, all of them
            assert len(events) == ledger.version, (offset, len(events), ledger.version)
        # The recovered store takes writes again, and its views follow.
        stored = store.append(SESSION, [{"role": "user", "content": "after the tear"}])
        assert store.active(SESSION)[-1] == stored[0]
        report = store.verify_projections()
        assert report.ok, [str(problem) for problem in report.problems]


@pytest.mark.parametrize("baseline_in", ["wal", "database file"])
def test_a_store_with_a_torn_wal_opens_and_keeps_every_transaction_that_ended_before_the_tear(
    baseline_in: str, tmp_path: Path, spawn: Spawn
) -> None:
    rng = random.Random(f"{SEED}-torn-{baseline_in}")
    live = tmp_path / "live"
    live.mkdir()
    path = live / "store.db"
    url = f"sqlite:///{path}"
    TranscriptStore.open(url).close()
    child = start_writer(spawn, "torn", "torn", url, SESSION, str(rng.randrange(2**32)))
    while "baseline" not in (line := child.line()):
        pass
    baseline_copy = tmp_path / "baseline.db"
    backup(path, baseline_copy)
    floor = line["baseline"]  # the baseline's frames end here
    if baseline_in == "database file":
        with closing(sqlite3.connect(path)) as connection:
            busy, _, _ = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 0
        floor = 0  # a tear anywhere in the WAL, its header included, keeps the baseline
    child.go()
    acked, wanted = 0, rng.randint(8, 30)
    durations: list[float] = []
    while acked < wanted:
        line = child.line()
        if line.get("ack") == "append":
            acked += 1
            durations.append(line["elapsed"])
    time.sleep(rng.uniform(0, 1.5 * statistics.median(durations)))
    lines = child.kill()
    baseline = log_rows(f"sqlite:///{baseline_copy}")
    assert baseline, "the baseline holds no events"

    image = tmp_path / "image"  # the crash image: database, WAL and the stale -shm
    image.mkdir()
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{path}{suffix}").exists():
            shutil.copy2(f"{path}{suffix}", image / f"store.db{suffix}")
    wal_end = (image / "store.db-wal").stat().st_size
    barrier = next(i for i, line in enumerate(lines) if "baseline" in line)
    phase_two = [line["wal"] for line in lines[barrier:] if "state" in line]
    assert phase_two == sorted(set(phase_two)), "the WAL was reset: sizes are not offsets"
    assert phase_two[0] > floor and wal_end >= phase_two[-1]

    # Tears: at the floor, at the end, right before and after transaction ends, and anywhere.
    offsets = {floor, wal_end}
    for size in rng.sample(phase_two, min(3, len(phase_two))):
        offsets |= {size, size - 1, size + 1}
    if floor == 0:
        offsets |= {1, WAL_HEADER - 1, WAL_HEADER}
    while len(offsets) < TEARS + 6:
        offsets.add(rng.randint(floor, wal_end))
    for index, offset in enumerate(sorted(o for o in offsets if floor <= o <= wal_end)):
        copy = copy_image(image, tmp_path / f"tear-{index}")
        how = "cut" if index % 2 == 0 or offset == wal_end else "garbage"
        tear(copy.parent / "store.db-wal", offset, how, rng)
        if index % 3 == 0:
            (copy.parent / "store.db-shm").unlink(missing_ok=True)
        try:
            check_torn_copy(copy, baseline, lines, offset)
        except AssertionError as failure:
            raise AssertionError(f"WAL {how} at byte {offset} of {wal_end}: {failure}") from None


def test_a_writer_killed_during_wal_checkpoints_loses_nothing_acknowledged(
    tmp_path: Path, spawn: Spawn
) -> None:
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    TranscriptStore.open(url).close()
    ledger = Ledger(SESSION)
    for run in range(4):
        rng = random.Random(f"{SEED}-checkpoint-{run}")
        child = start_writer(spawn, f"checkpoint-{run}", "checkpoint", url, SESSION,
                             f"c{run}", str(rng.randrange(2**32)))  # fmt: skip
        arm_after = rng.randint(1, 3)
        durations: list[float] = []
        while True:
            line = child.line()
            if line.get("ack") == "checkpoint":
                durations.append(line["elapsed"])
            if line.get("intent") == "checkpoint" and len(durations) >= arm_after:
                time.sleep(rng.uniform(0, 1.5 * statistics.median(durations)))
                break
        ledger.record(child.kill())
        ledger.check(url)
    assert len(ledger.messages) >= 4 * 12
