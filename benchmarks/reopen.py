"""Reopen benchmark: what a new process pays before its first write, as the history grows.

    python benchmarks/reopen.py              # ~3 min; prints a table
    python benchmarks/reopen.py --check      # exit 1 if a target is missed
    python benchmarks/reopen.py --help

One SQLite file store holds a short session (`--short`, 1,000 messages) and a long one
(`--long`, 100,000). In interleaved rounds, a fresh process opens the store and writes to
one of them once, timing that first write and reading its memory (VmRSS before it, the
high-water mark after it, reset in between where Linux allows). The write is an append of
one new message, or of the context an agent resumes with (the last 50 active messages,
read before the clock starts, with their ids: stored, so skipped; and one new message):

  (a) the first append to the long session vs to the short one. Target <= 2: a process
      that replayed the session's events to decide the write took 84x (see README,
      Performance).
  (b) the memory that first append takes, long vs short, each counted as at least 1 MB
      (below that the ratio measures noise). Target: flat (<= 1.5).
  (a', b') the same for that first append of a resumed context.

Then, once: (c) catch-up throughput: `--behind` (100,000) events stored by a writer
without the views (the event-sourcing library alone, as an older release would), projected
when the next store opens. Target >= 30,000 events/s.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import harness

from transcripts import TranscriptStore
from transcripts.application.event_log import TranscriptLog
from transcripts.application.storage import StoreConfig
from transcripts.domain.transcript import Transcript

TARGET_TIME = 2.0
TARGET_MEMORY = 1.5
# Below this a write's memory is noise to the ratio: the allocator's arenas, SQLite's page
# cache (2 MB at most per connection) reading a deeper index; both figures are printed.
MEMORY_FLOOR_KB = 1024
TARGET_CATCH_UP = 30_000  # events/s

SHORT, LONG = "short", "long"


# What the first append gives, and the figures it is measured by.
WRITES = {"one message": ("(a)", "(b)"), "context of 51": ("(a')", "(b')")}


def first_write_child(url: str, session: str, write: str) -> None:
    """In the fresh process: open, append once (one new message, or the `context` and one
    new), print seconds and kB taken (JSON)."""
    store = TranscriptStore.open(url)
    new = [harness.make_message(400, 1)]
    given = [*store.iter_active(session, tail=50), *new] if write == "context of 51" else new
    gc.collect()
    before = harness.status_kb("VmRSS")
    harness.reset_peak()  # so that the peak is the append's own
    started = time.perf_counter()
    store.append(session, given)
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "kb": harness.status_kb("VmHWM") - before}))
    store.close()


def catch_up_child(url: str) -> None:
    """In the fresh process: open the store (which catches its views up); print seconds."""
    started = time.perf_counter()
    TranscriptStore.open(url).close()
    print(json.dumps({"seconds": time.perf_counter() - started}))


def in_fresh_process(*arguments: str) -> dict[str, Any]:
    """Run this script with `arguments` in a new interpreter; the JSON it prints."""
    output = subprocess.run(
        [sys.executable, __file__, *arguments], check=True, capture_output=True, text=True
    )
    result: dict[str, Any] = json.loads(output.stdout.strip().splitlines()[-1])
    return result


def seed(url: str, sessions: dict[str, int], chars: int) -> None:
    """Start each session and append its messages, 1,000 per call."""
    with TranscriptStore.open(url, durability="normal") as store:
        for session, count in sessions.items():
            store.start(session, source="benchmark")
            for first in range(0, count, 1000):
                messages = range(first, min(count, first + 1000))
                store.append(session, [harness.make_message(chars, n) for n in messages])


def write_behind_the_views(url: str, events: int, chars: int) -> None:
    """`events` events in sessions of 1,000, stored with the library alone: no view sees
    them until a store catches up."""
    log = TranscriptLog(StoreConfig.from_url(url))
    try:
        for k in range(0, events, 1000):
            transcript = Transcript.start(
                f"behind-{k}", source="benchmark", model=None, parent_id=None, metadata={}
            )
            count = min(1000, events - k) - 1  # the Started event counts
            transcript.append([harness.make_message(chars, n) for n in range(count)])
            log.save(transcript)
    finally:
        log.close()


def main(argv: list[str] | None = None) -> int:
    """Parse the options; run in a scratch directory (or be a child process)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--first-write-child"]:
        first_write_child(argv[1], argv[2], argv[3])
        return 0
    if argv[:1] == ["--catch-up-child"]:
        catch_up_child(argv[1])
        return 0
    parser = harness.new_parser(__doc__)
    harness.add_count(parser, "--rounds", 5, "fresh processes per session")
    harness.add_count(parser, "--short", 1_000, "messages in the short session")
    harness.add_count(parser, "--long", 100_000, "messages in the long session")
    harness.add_count(parser, "--behind", 100_000, "events written behind the views")
    harness.add_chars_option(parser, 400)
    harness.add_scratch_options(parser)
    harness.add_seed_option(parser)
    harness.add_check_option(parser)
    args = parser.parse_args(argv)
    return harness.run_in_scratch_directory(args, run)


def run(args: argparse.Namespace, directory: Path) -> int:
    """Seed, measure fresh processes in interleaved rounds, print the tables."""
    rng = random.Random(args.seed)
    url = f"sqlite:///{directory / 'store.db'}"
    started = time.perf_counter()
    seed(url, {SHORT: args.short, LONG: args.long}, args.chars)
    seeded = time.perf_counter() - started
    results: dict[tuple[str, str], list[dict[str, Any]]] = {
        (session, write): [] for session in (SHORT, LONG) for write in WRITES
    }
    for _ in range(args.rounds):
        for session, write in rng.sample(list(results), len(results)):
            child = in_fresh_process("--first-write-child", url, session, write)
            results[session, write].append(child)
    write_behind_the_views(url, args.behind, args.chars)
    caught_up = in_fresh_process("--catch-up-child", url)["seconds"]

    print(harness.title("reopen", ("eventsourcing",)))
    harness.print_directory(
        directory,
        f"sessions of {args.short:,} and {args.long:,} messages, seeded in {seeded:.0f} s",
    )
    print(f"{'first append in a fresh process':44} {'median ms':>10} {'peak MB':>8}")
    for (session, write), runs in results.items():
        count = args.short if session == SHORT else args.long
        seconds = statistics.median(r["seconds"] for r in runs)
        megabytes = statistics.median(r["kb"] for r in runs) / 1024
        label = f"{write}, {count:,} messages"
        print(f"{label:44} {seconds * 1000:>10,.1f} {megabytes:>8,.1f}")
    rate = args.behind / caught_up
    print(f"catch-up of {args.behind:,} events behind the views: {caught_up:.1f} s\n")

    verdicts = harness.Verdicts()
    for write, (time_figure, memory_figure) in WRITES.items():
        longs, shorts = results[LONG, write], results[SHORT, write]
        time_ratios = [
            long["seconds"] / short["seconds"] for long, short in zip(longs, shorts, strict=True)
        ]
        memory_ratios = [
            max(long["kb"], MEMORY_FLOOR_KB) / max(short["kb"], MEMORY_FLOOR_KB)
            for long, short in zip(longs, shorts, strict=True)
        ]
        verdicts.ratio(
            f"{time_figure} first append, {write}",
            time_ratios,
            TARGET_TIME,
            at_most=True,
        )
        verdicts.ratio(f"{memory_figure} its memory", memory_ratios, TARGET_MEMORY, at_most=True)
    verdicts.line(
        "(c) catch-up, events/s", f"{rate:,.0f}", "-", rate, TARGET_CATCH_UP, at_most=False
    )
    return verdicts.exit_code(args.check)


if __name__ == "__main__":
    raise SystemExit(main())
