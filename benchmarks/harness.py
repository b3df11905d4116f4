"""The benchmarks' harness: made-up messages, timing in interleaved rounds, reporting."""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any


def make_message(chars: int, number: int) -> dict[str, Any]:
    """A chat message of about `chars` characters of content, alternating roles."""
    words = "the quick brown fox jumps over the lazy dog and keeps on running "
    text = (words * (chars // len(words) + 1))[:chars]
    return {"role": "user" if number % 2 else "assistant", "content": f"{number}: {text}"}


def timed(call: Callable[[], object], times: int) -> list[float]:
    """Seconds per call, each call timed on its own."""
    clock = time.perf_counter_ns
    samples = []
    for _ in range(times):
        started = clock()
        call()
        samples.append((clock() - started) / 1e9)
    return samples


def round_ratios(samples: dict[str, list[list[float]]], over: str, under: str) -> list[float]:
    return [
        statistics.median(a) / statistics.median(b)
        for a, b in zip(samples[over], samples[under], strict=True)
    ]


def quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 4:
        return min(values), max(values)
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def filesystem_of(path: Path) -> str:
    """The filesystem type holding `path` (Linux; best effort)."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return "unknown"
    best, kind = "", "unknown"
    resolved = str(path.resolve())
    for line in mounts:
        fields = line.split()
        if len(fields) >= 3 and (
            resolved == fields[1] or resolved.startswith(fields[1].rstrip("/") + "/")
        ):
            if len(fields[1]) >= len(best):
                best, kind = fields[1], fields[2]
    return kind


def package_version(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "?"


def micros(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}"


def run_in_scratch_directory(
    args: argparse.Namespace, run: Callable[[argparse.Namespace, Path], int]
) -> int:
    """Run a benchmark in a new directory under `args.dir`; remove it unless `args.keep`."""
    directory = Path(tempfile.mkdtemp(prefix="transcripts-bench-", dir=args.dir))
    try:
        return run(args, directory)
    finally:
        if args.keep:
            print(f"databases kept in {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)
