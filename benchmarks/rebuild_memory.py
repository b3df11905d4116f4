"""Peak RSS of a rebuild: a fresh process opens a SQLite store and rebuilds its views.

Part (d) of read_models.py. `measure_rss` runs the benchmark script again as a subprocess,
`SCRIPT --rss-child STORE.db`, whose `--rss-child` calls `rss_child` (so the process holds
what the benchmark imports, as the figures in the README were measured), and reads the one
line of JSON it prints. The child reads VmRSS after opening the store, resets VmHWM (the
high-water mark) where Linux allows, rebuilds, and reads VmHWM again, with VmRSS at every
progress call; it also times the rebuild after its last progress call (the final batches
and the table swap, while writers wait) and measures the WAL file it leaves.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import TypedDict

from harness import peak_kb, reset_peak, status_kb

from transcripts import TranscriptStore


class RebuildMemory(TypedDict):
    """What the child prints, as JSON."""

    events: int  # events the rebuild replayed
    seconds: float  # the rebuild's duration
    after_last_batch: float | None  # seconds after the last progress call (None: no calls)
    before_kb: int  # VmRSS after opening the store
    peak_kb: int  # VmHWM after the rebuild (ru_maxrss without /proc)
    hwm_reset: bool  # whether VmHWM was reset before the rebuild
    wal_bytes: int  # the WAL file's size afterwards
    samples: list[list[int]]  # [events done, VmRSS kB] at some progress calls, and the last


def rss_child(path: str) -> None:
    """Runs in the subprocess: open the store, rebuild it, print what memory it took (JSON)."""
    store = TranscriptStore.open(f"sqlite:///{path}")
    gc.collect()
    before = status_kb("VmRSS")
    reset = reset_peak()  # so that the peak is the rebuild's own
    samples: list[tuple[int, int]] = []
    last = [time.perf_counter()]

    def progress(done: int, total: int) -> None:
        samples.append((done, status_kb("VmRSS")))
        last[0] = time.perf_counter()

    started = time.perf_counter()
    events = store.rebuild_projections(progress)
    ended = time.perf_counter()
    peak = peak_kb()
    wal = Path(path + "-wal")
    wal_bytes = wal.stat().st_size if wal.exists() else 0
    store.close()
    print(
        json.dumps(
            {
                "events": events,
                "seconds": ended - started,
                "after_last_batch": ended - last[0] if samples else None,
                "before_kb": before,
                "peak_kb": peak,
                "hwm_reset": reset,
                "wal_bytes": wal_bytes,
                "samples": samples[:: max(1, len(samples) // 10)] + samples[-1:],
            }
        )
    )


def measure_rss(path: Path, script: str) -> RebuildMemory:
    """Rebuild the store at `path` in a fresh `script --rss-child`; what its memory did."""
    output = subprocess.run(
        [sys.executable, script, "--rss-child", str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    memory: RebuildMemory = json.loads(output.stdout.strip().splitlines()[-1])
    return memory
