"""The compaction benchmark's memory check: `compact()` of one very long session, in fresh
processes (compaction.py --messages N).

    python benchmarks/compaction_memory.py fill URL N CHARS   # one session of N messages
    python benchmarks/compaction_memory.py compact URL        # compact() it: time, peak RSS
    python benchmarks/compaction_memory.py read URL           # only active(): peak RSS

Each step is its own process, so its peak RSS (`ru_maxrss`) is its own. `compact` is the
first write to the session in its process: the transcript is replayed from the log, then
the attempt reads every active message and `summarize` gets them all. `read` only reads
them: what `summarize` itself is given, the floor of any compaction that hands the whole
context to a summarizer. Each prints one JSON line.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import harness

from transcripts import TranscriptStore

SESSION = "long"
CHUNK = 5_000  # messages per append while filling


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fill(url: str, count: int, chars: int) -> dict[str, Any]:
    started = time.perf_counter()
    with TranscriptStore.open(url) as store:
        store.start(SESSION)
        for first in range(0, count, CHUNK):
            last = min(count, first + CHUNK)
            store.append(SESSION, [harness.make_message(chars, n) for n in range(first, last)])
        store.catch_up_projections()
    return {"seconds": time.perf_counter() - started}


def compact(url: str) -> dict[str, Any]:
    with TranscriptStore.open(url) as store:
        opened = peak_mb()
        started = time.perf_counter()
        result = store.compact(
            SESSION, lambda messages: [{"role": "system", "content": "summary"}, *messages[-49:]]
        )
        seconds = time.perf_counter() - started
        if not result.committed:
            raise RuntimeError(f"{result.failure}: {result.error}")
        return {"seconds": seconds, "peak_mb": peak_mb(), "opened_mb": opened}


def read(url: str) -> dict[str, Any]:
    with TranscriptStore.open(url) as store:
        opened = peak_mb()
        started = time.perf_counter()
        count = len(store.active(SESSION))
        seconds = time.perf_counter() - started
        return {"seconds": seconds, "peak_mb": peak_mb(), "opened_mb": opened, "active": count}


def step(*arguments: str) -> dict[str, Any]:
    """Run one step in a fresh process; what it printed."""
    done = subprocess.run(
        [sys.executable, __file__, *arguments], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def report(directory: Path, count: int, chars: int, target: float) -> harness.Verdicts:
    """Fill a store, then read and compact it in fresh processes; the verdict on memory."""
    url = f"sqlite:///{directory / 'long.db'}"
    filled = step("fill", url, str(count), str(chars))
    print(f"compact() of {count:,} active messages of ~{chars} chars "
          f"(filled in {filled['seconds']:.0f} s, fresh processes)")  # fmt: skip
    reader = step("read", url)
    compactor = step("compact", url)
    for label, figures in (("read active(): summarize's input", reader), ("compact()", compactor)):
        print(f"  {label:<36} {figures['seconds']:7.1f} s  peak RSS {figures['peak_mb']:7,.0f} MB "
              f"(after opening {figures['opened_mb']:,.0f} MB)")  # fmt: skip
    verdicts = harness.Verdicts(heading="memory", widths=(44, 8, 15, 8))
    ratio = compactor["peak_mb"] / reader["peak_mb"]
    verdicts.line("compact() peak RSS / active() reader's", f"{ratio:.2f}", "", ratio, target, True)
    grown = (compactor["peak_mb"] - compactor["opened_mb"]) / (
        reader["peak_mb"] - reader["opened_mb"]
    )
    shown = f"{grown:.2f}"
    verdicts.line("the same, above each one's RSS once opened", shown, "", grown, None, True)
    print()
    return verdicts


if __name__ == "__main__":
    command, url, *rest = sys.argv[1:]
    if command == "fill":
        print(json.dumps(fill(url, int(rest[0]), int(rest[1]))))
    elif command == "compact":
        print(json.dumps(compact(url)))
    else:
        print(json.dumps(read(url)))
