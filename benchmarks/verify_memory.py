"""Peak RSS of `projections verify` as a session's history grows (issue 29).

    python benchmarks/verify_memory.py              # 1,000 and 100,000 messages, ~2 min
    python benchmarks/verify_memory.py --check      # exit 1 if the target is missed
    python benchmarks/verify_memory.py --small 1000 --large 100000 --store-dir stores/

Two SQLite stores are built through the public API, each one session of `--small` (1,000)
or `--large` (100,000) messages (about 200 characters each, appended 1,000 per call, a
committed compaction every 10,000 messages keeping the last 100, so that the history holds
superseded messages as a long-lived agent's does). Each is then verified in a fresh
process (`SCRIPT --rss-child STORE.db`, as rebuild_memory.py measures a rebuild): VmRSS after
opening the store, VmHWM (the high-water mark, reset before where Linux allows) after
`store.verify_projections()`, the seconds it took. Target: the peak of the large store at
most 1.5 times the peak of the small one (memory flat in the length of the history).
`--store-dir` keeps the built stores and reuses them next time.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

from harness import peak_kb, reset_peak, status_kb

from transcripts import TranscriptStore

TARGET = 1.5  # large peak / small peak
BATCH = 1_000  # messages appended per call
COMPACT_EVERY = 10_000  # messages between committed compactions
KEEP = 100  # messages a compaction keeps


class VerifyMemory(TypedDict):
    """What the child prints, as JSON."""

    messages: int  # messages the store holds
    ok: bool  # whether the views matched the log
    seconds: float
    before_kb: int  # VmRSS after opening the store
    peak_kb: int  # VmHWM after verifying
    hwm_reset: bool  # whether VmHWM was reset before verifying


def rss_child(path: str) -> None:
    """Runs in the subprocess: open the store, verify it, print what memory it took."""
    store = TranscriptStore.open(f"sqlite:///{path}")
    messages = sum(session["messages"] for session in store.sessions())
    gc.collect()
    before = status_kb("VmRSS")
    reset = reset_peak()  # so that the peak is verify's own
    started = time.perf_counter()
    report = store.verify_projections()
    seconds = time.perf_counter() - started
    peak = peak_kb()
    store.close()
    result = {"messages": messages, "ok": report.ok, "seconds": seconds}
    print(json.dumps({**result, "before_kb": before, "peak_kb": peak, "hwm_reset": reset}))


def measure(path: Path) -> VerifyMemory:
    """Verify the store at `path` in a fresh process; what its memory did."""
    output = subprocess.run(
        [sys.executable, __file__, "--rss-child", str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    memory: VerifyMemory = json.loads(output.stdout.strip().splitlines()[-1])
    return memory


def build(path: Path, messages: int) -> None:
    """One session of `messages` messages, compacted every COMPACT_EVERY (unless built)."""
    if path.exists():
        return
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    with TranscriptStore.open(f"sqlite:///{partial}", durability="normal") as store:
        store.start("long", source="benchmark")
        for first in range(0, messages, BATCH):
            count = min(BATCH, messages - first)
            store.append("long", [_message(first + n) for n in range(count)])
            if (first + count) % COMPACT_EVERY == 0 and first + count < messages:
                store.compact("long", _keep_last)
    partial.replace(path)  # closed: its WAL is checkpointed and gone


def _message(number: int) -> dict[str, Any]:
    role = "user" if number % 2 else "assistant"
    return {"role": role, "content": f"message {number}: " + "lorem ipsum dolor " * 10}


def _keep_last(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "summary of what came before"}, *messages[-KEEP:]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=1_000, help="messages of the small store")
    parser.add_argument("--large", type=int, default=100_000, help="messages of the large store")
    parser.add_argument("--store-dir", type=Path, help="keep the stores here and reuse them")
    parser.add_argument("--check", action="store_true", help=f"exit 1 unless <= {TARGET}x")
    parser.add_argument("--rss-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rss_child:
        rss_child(args.rss_child)
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.store_dir or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        figures = []
        for messages in (args.small, args.large):
            path = directory / f"verify-{messages}.db"
            started = time.perf_counter()
            build(path, messages)
            built = time.perf_counter() - started
            figures.append(measure(path))
            print(f"built {messages:,} messages in {built:.1f} s", file=sys.stderr)
    print(f"{'messages':>10} {'verify s':>9} {'RSS open MB':>12} {'peak MB':>8}  ok")
    for figure in figures:
        print(
            f"{figure['messages']:>10,} {figure['seconds']:>9.2f} "
            f"{figure['before_kb'] / 1024:>12.1f} {figure['peak_kb'] / 1024:>8.1f}  "
            f"{figure['ok']}" + ("" if figure["hwm_reset"] else " (peak not reset)")
        )
    small, large = figures
    ratio = large["peak_kb"] / small["peak_kb"]
    verdict = "ok" if ratio <= TARGET else "MISSED"
    sizes = f"peak at {args.large:,} / peak at {args.small:,}"
    print(f"{sizes}: {ratio:.2f} (target <= {TARGET}) {verdict}")
    return 1 if args.check and ratio > TARGET else 0


if __name__ == "__main__":
    sys.exit(main())
