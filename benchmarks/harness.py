"""The benchmarks' harness: options, scratch places, interleaved rounds, ratios, reports.

Every benchmark in this folder is a script that imports this module (the script's folder is
on `sys.path`): the common command-line options, a scratch directory or PostgreSQL database
made for the run and removed after it, variants timed in interleaved rounds whose order is
shuffled every round, per-round ratios with their medians and interquartile ranges, and the
printed headers and tables.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import multiprocessing
import os
import platform
import pstats
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transcripts import TranscriptStore

if TYPE_CHECKING:
    import psycopg

Call = Callable[[], object]
Setup = Callable[[], Call]  # run before every round, untimed; returns the call to time
Samples = dict[str, list[list[float]]]  # per variant, per round, the seconds of each call

NOISY_IQR = 0.25  # per-round ratios whose interquartile range is wider than this: say so
DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"
SERVER_VARIABLE = "TRANSCRIPTS_TEST_POSTGRES_URL"


# -- writer processes -----------------------------------------------------------------------


@dataclass
class WriterProcesses:
    """Processes (spawned) each running `target(url, "writer-I", variant, barrier, seconds,
    results)`: waiting at `barrier` until the parent passes it too, then putting one result
    on `results`."""

    barrier: Any
    results: Any
    processes: list[Any]

    @classmethod
    def start(
        cls, target: Callable[..., None], writers: int, url: str, variant: object, seconds: float
    ) -> WriterProcesses:
        context = multiprocessing.get_context("spawn")
        barrier, results = context.Barrier(writers + 1), context.Queue()
        processes = [
            context.Process(
                target=target, args=(url, f"writer-{i}", variant, barrier, seconds, results)
            )
            for i in range(writers)
        ]
        for process in processes:
            process.start()
        return cls(barrier, results, processes)

    def outcomes(self, timeout: float) -> list[Any]:
        """Each writer's result (waiting up to `timeout` for each); the processes joined."""
        outcomes = [self.results.get(timeout=timeout) for _ in self.processes]
        for process in self.processes:
            process.join()
        return outcomes


# -- memory ---------------------------------------------------------------------------------


def status_kb(field: str) -> int:
    """A kB field of /proc/self/status (VmRSS, VmHWM); 0 if absent."""
    status = Path("/proc/self/status")
    for line in status.read_text().splitlines() if status.exists() else []:
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def reset_peak() -> bool:
    """Reset this process's high-water mark (VmHWM) to its RSS (Linux >= 4.0), so that the
    next peak read is what follows; whether it was reset."""
    before = status_kb("VmRSS")
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return status_kb("VmHWM") <= before + 1024


def peak_kb() -> int:
    """This process's peak RSS: VmHWM, else (no /proc) ru_maxrss, which on Linux also counts
    the forking parent's RSS before exec."""
    import resource  # Unix only

    return status_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# -- made-up data ---------------------------------------------------------------------------


def make_message(chars: int, number: int) -> dict[str, Any]:
    """A chat message of about `chars` characters of content, alternating roles."""
    words = "the quick brown fox jumps over the lazy dog and keeps on running "
    text = (words * (chars // len(words) + 1))[:chars]
    return {"role": "user" if number % 2 else "assistant", "content": f"{number}: {text}"}


# -- command-line options -------------------------------------------------------------------


def new_parser(doc: str, epilog: str | None = None) -> argparse.ArgumentParser:
    """A parser described by the first paragraph of a benchmark's docstring."""
    return argparse.ArgumentParser(description=doc.split("\n\n")[0], epilog=epilog)


def add_count(parser: argparse.ArgumentParser, flag: str, default: int, meaning: str) -> None:
    """An integer option whose help text shows its default."""
    parser.add_argument(flag, type=int, default=default, help=f"{meaning} (default {default})")


def add_round_options(
    parser: argparse.ArgumentParser,
    rounds: int,
    batch: int,
    calls: str,
    batch_flag: str = "--batch",
) -> None:
    """--rounds, and --batch (or `batch_flag`): timed `calls` per variant per round."""
    add_count(parser, "--rounds", rounds, f"interleaved rounds of {calls}")
    add_count(parser, batch_flag, batch, f"{calls} per variant per round")


def add_chars_option(parser: argparse.ArgumentParser, default: int) -> None:
    """--chars: the size of the made-up messages."""
    add_count(parser, "--chars", default, "characters of content per message")


def add_scratch_options(parser: argparse.ArgumentParser, what: str = "databases") -> None:
    """--dir and --keep: where the scratch directory is made, and whether it stays."""
    parser.add_argument(
        "--dir", type=Path, help=f"directory for the {what} (default: a new temporary one)"
    )
    parser.add_argument("--keep", action="store_true", help=f"keep the {what} afterwards")


def add_seed_option(parser: argparse.ArgumentParser) -> None:
    """--seed: the seed of the shuffled round order (default: a fresh one)."""
    parser.add_argument("--seed", type=int, default=None, help="seed for the round order")


def add_check_option(
    parser: argparse.ArgumentParser, meaning: str = "exit 1 if a target is missed"
) -> None:
    """--check: exit 1 when a target is missed."""
    parser.add_argument("--check", action="store_true", help=meaning)


def add_server_option(parser: argparse.ArgumentParser, required: bool = False) -> None:
    """--server: a PostgreSQL URL; unless required, $TRANSCRIPTS_TEST_POSTGRES_URL or local."""
    meaning = "a postgresql:// URL of a database on the server (databases are made beside it)"
    default = None if required else os.environ.get(SERVER_VARIABLE) or DEFAULT_SERVER
    parser.add_argument("--server", required=required, default=default, help=meaning)


# -- scratch places -------------------------------------------------------------------------


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


def connect(url: str) -> psycopg.Connection[Any]:
    """An autocommit connection to the PostgreSQL database at `url`."""
    import psycopg  # imported here: the SQLite benchmarks need neither psycopg nor the config

    from transcripts.application.storage import StoreConfig

    location = StoreConfig.from_url(url).location
    if location is None:
        raise ValueError(f"not a postgresql:// URL: {url}")
    return psycopg.connect(**location.connection_kwargs(), autocommit=True)


def execute(url: str, statement: str) -> None:
    """Run one statement on its own autocommit connection (CREATE DATABASE, say)."""
    with connect(url) as connection:
        connection.execute(statement)  # type: ignore[arg-type]


@contextmanager
def scratch_database(server: str, prefix: str = "transcripts_bench_") -> Iterator[str]:
    """A fresh database beside `server`'s, with the store's tables; dropped afterwards."""
    name = f"{prefix}{uuid.uuid4().hex[:12]}"
    execute(server, f'CREATE DATABASE "{name}"')
    try:
        url = server.rsplit("/", 1)[0] + "/" + name
        TranscriptStore.open(url).close()  # the tables
        yield url
    finally:
        execute(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- measuring ------------------------------------------------------------------------------


def timed(call: Call, times: int) -> list[float]:
    """Seconds per call, each call timed on its own."""
    clock = time.perf_counter_ns
    samples = []
    for _ in range(times):
        started = clock()
        call()
        samples.append((clock() - started) / 1e9)
    return samples


def same_call(call: Call) -> Setup:
    """A setup that needs no preparing: the same call every round."""
    return lambda: call


def warm_up(variants: Mapping[str, Setup], calls: int) -> None:
    """`calls` untimed calls of every variant."""
    for setup in variants.values():
        timed(setup(), calls)


def run_rounds(
    variants: Mapping[str, Setup],
    rounds: int,
    batch: int,
    rng: random.Random,
    between: Callable[[], None] | None = None,
) -> Samples:
    """Per variant, per round, the seconds of each of `batch` calls.

    Each round runs every variant once, in an order shuffled every round: its setup
    (untimed), then `batch` timed calls. `between` runs, untimed, before each variant.
    """
    gc.collect()
    samples: Samples = {name: [] for name in variants}
    names = list(variants)
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            if between is not None:
                between()
            samples[name].append(timed(variants[name](), batch))
    return samples


def flatten(rounds: Iterable[list[float]]) -> list[float]:
    """Every sample of every round, in one list."""
    return [sample for samples in rounds for sample in samples]


def round_ratios(samples: Samples, over: str, under: str) -> list[float]:
    """Per round: the median of `over` divided by the median of `under`."""
    return [
        statistics.median(a) / statistics.median(b)
        for a, b in zip(samples[over], samples[under], strict=True)
    ]


def round_differences(samples: Samples, over: str, under: str) -> list[float]:
    """Per round: the median of `over` less the median of `under`, in seconds."""
    return [
        statistics.median(a) - statistics.median(b)
        for a, b in zip(samples[over], samples[under], strict=True)
    ]


def quartiles(values: Sequence[float]) -> tuple[float, float]:
    """The first and third quartiles (with fewer than 4 values: the extremes)."""
    if len(values) < 4:
        return min(values), max(values)
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def percentile(values: Sequence[float], p: float) -> float:
    """The nearest-rank `p`th percentile of `values`."""
    return sorted(values)[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def profile(label: str, call: Call, top: int) -> None:
    """cProfile one call and print its `top` functions, by cumulative and own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    call()
    profiler.disable()
    print(f"\ncProfile of {label} (times include profiler overhead)")
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


# -- reporting ------------------------------------------------------------------------------


def micros(seconds: float) -> str:
    """Seconds as whole microseconds, with thousands separators."""
    return f"{seconds * 1e6:,.0f}"


def package_version(distribution: str) -> str:
    """The installed version of `distribution`, or '?'."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "?"


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


def title(benchmark: str, packages: Sequence[str], sqlite: bool = True) -> str:
    """'transcript-store NAME benchmark — Python …, PACKAGE …, SQLite …, N CPUs'."""
    parts = [f"Python {platform.python_version()}"]
    parts += [f"{name} {package_version(name)}" for name in packages]
    parts += [f"SQLite {sqlite3.sqlite_version}"] if sqlite else []
    parts += [f"{os.cpu_count()} CPUs"]
    return f"transcript-store {benchmark} benchmark — {', '.join(parts)}"


def print_directory(directory: Path, details: str) -> None:
    """Where the databases are (and on what filesystem), then `details`; warn of RAM disks."""
    filesystem = filesystem_of(directory)
    print(f"databases in {directory} ({filesystem}); {details}")
    if filesystem in {"tmpfs", "ramfs"}:
        print(
            "warning: the databases are on a RAM filesystem, fsync is free: "
            "use --dir on a real disk"
        )


def server_version(url: str) -> str:
    """The PostgreSQL server's `SELECT version()`."""
    with connect(url) as connection:
        row = connection.execute("SELECT version()").fetchone()
    return str(row[0]) if row else "?"


def print_postgres_header(benchmark: str, server: str) -> None:
    """The title (Python, library versions, CPUs, platform), then the server's version."""
    print(f"{title(benchmark, ('eventsourcing', 'psycopg'), sqlite=False)}, {platform.platform()}")
    print(server_version(server))


@dataclass(frozen=True)
class TimingTable:
    """Per variant, the median and p90 of its calls in µs, in columns of the given widths."""

    label_width: int
    value_width: int

    def header(self, heading: str, column: str) -> None:
        """The table's heading line: `heading`, `column` (the median), p90."""
        print(f"{heading:{self.label_width}} {column:>{self.value_width}} {'p90':>8}")

    def row(self, name: str, seconds: Sequence[float], p90: bool = True) -> None:
        """One variant's median (and p90) of `seconds`, in µs."""
        line = f"{name:{self.label_width}} {micros(statistics.median(seconds)):>{self.value_width}}"
        if p90:
            line += f" {micros(statistics.quantiles(seconds, n=10)[-1]):>8}"
        print(line)

    def rows(self, samples: Samples) -> None:
        """A row per variant of `samples`, every round's calls together."""
        for name, rounds in samples.items():
            self.row(name, flatten(rounds))


@dataclass
class Verdicts:
    """The closing table: a line per figure (figure, measured, spread, target, verdict)."""

    heading: str = "figure"
    widths: tuple[int, int, int, int] = (44, 9, 17, 10)
    missed: list[str] = field(default_factory=list)
    noisy: bool = False

    def __post_init__(self) -> None:
        """Print the table's heading line."""
        label, value, spread, target = self.widths
        print(f"{self.heading:{label}} {'median':>{value}} {'IQR of rounds':>{spread}} "
              f"{'target':>{target}}")  # fmt: skip

    def ratio(self, label: str, ratios: list[float], target: float | None, at_most: bool) -> None:
        """The median of per-round ratios and their IQR, judged against `target` (if any)."""
        value = statistics.median(ratios)
        low, high = quartiles(ratios)
        self.noisy |= target is not None and high - low > NOISY_IQR
        self.line(label, f"{value:.2f}", f"{low:.2f}–{high:.2f}", value, target, at_most)

    def line(
        self, label: str, shown: str, spread: str, value: float, target: float | None, at_most: bool
    ) -> None:
        """A figure as shown; judged if it has a target (else 'info')."""
        widths = self.widths
        start = f"{label:{widths[0]}} {shown:>{widths[1]}} {spread:>{widths[2]}}"
        if target is None:
            print(f"{start} {'info':>{widths[3]}}")
            return
        ok = value <= target if at_most else value >= target
        if not ok:
            self.missed.append(label)
        goal = f"{'<=' if at_most else '>='} {target:,g}"
        print(f"{start} {goal:>{widths[3]}}  {'ok' if ok else 'MISSED'}")

    def warn_if_noisy(self, advice: str) -> None:
        """Say so if the rounds of a ratio disagree (a busy machine)."""
        if self.noisy:
            print(f"warning: the rounds disagree (wide IQR): the machine is busy; {advice}")

    def exit_code(self, check: bool) -> int:
        """1 if `check` and a target was missed (named on stderr), else 0."""
        if self.missed and check:
            print(f"target missed: {', '.join(self.missed)}", file=sys.stderr)
            return 1
        return 0
