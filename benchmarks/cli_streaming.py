"""Command-line streaming benchmark: memory of the whole-session commands, time to a first line.

    python benchmarks/cli_streaming.py                  # ~4 min; prints two tables
    python benchmarks/cli_streaming.py --check          # exit 1 if a target is missed
    python benchmarks/cli_streaming.py --large 20000 --first-line 5000   # a quick run

Measured in one run, each command in a fresh process (`python -m transcripts`), as a user
runs it; stores are built through the public API in a scratch directory:

  (a) peak RSS (the child's `ru_maxrss`, from `wait4`) of `show`, `history`, `events`,
      `export` and `export --format md --history` of a session of `--large` (100,000)
      messages vs the same command of a session of `--small` (1,000), output to a file
      (/dev/null) and, with `--tty`, to a pseudo-terminal; each command `--rounds` times,
      sizes interleaved, medians. The ratio large / small: target <= 1.5. Seconds are info.
  (b) time to the third line of `history SESSION | head -3` (a reader that closes the pipe
      after three lines) on a session of `--first-line` (20,000) messages, vs the whole
      run of `history SESSION --limit 3` to a pipe; interleaved rounds, median of the
      per-round ratios. Target: the first lines come at once (<= 1.5x the `--limit 3` run:
      both are the cost of starting the process and opening the store, plus a page).

Each session has a compaction and a rewind, so that boundary rows are printed too: its first
`--compact-at` (500) messages are compacted into a summary and their last 10, the others
appended after, the last 2 rewound. A compaction event names every message of the context
it compacts (the ids it supersedes and keeps), so `events` holds that one event whole:
`--compact-at 0` compacts last instead (the last 100 messages into 10), an event naming
every message of the session, the worst case. Messages are `--chars` (400) characters.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness import (
    add_chars_option,
    add_check_option,
    add_count,
    add_scratch_options,
    add_seed_option,
    make_message,
    new_parser,
    run_in_scratch_directory,
    title,
)

from transcripts import TranscriptStore

COMMANDS = {
    "show": ["show"],
    "history": ["history"],
    "events": ["events"],
    "export": ["export"],
    "export md --history": ["export", "--format", "md", "--history"],
}
BATCH = 1000  # messages appended per call while building


def build(url: str, session: str, messages: int, chars: int, compact_at: int) -> None:
    """A session of `messages` messages: the first `compact_at` compacted into a summary and
    the last 10 of them, then the rest appended, then the last 2 rewound. `compact_at` 0:
    the compaction comes last, keeping all but 90 of the messages (its event names every
    message of the context)."""
    with TranscriptStore.open(url, durability="normal") as store:
        store.start(session)

        def append(start: int, end: int) -> None:
            for first in range(start, end, BATCH):
                batch = range(first, min(first + BATCH, end))
                store.append(session, [make_message(chars, n) for n in batch])

        compact_at = min(compact_at, messages)
        if compact_at:
            append(0, compact_at)
            store.compact(session, lambda active: [make_message(chars, -1), *active[-10:]])
            append(compact_at, messages)
        else:
            append(0, messages)
            store.compact(session, lambda active: [*active[:-100], *active[-10:]])
        store.rewind(session, count=2)


# The command line, reporting its own peak RSS (VmHWM: the high-water mark of its own
# memory, fresh at exec; `ru_maxrss` from wait4 would include the forking parent's RSS).
CHILD = """
import atexit, sys
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            sys.stderr.write("peak-kb " + line.split()[1] + "\\n")
atexit.register(peak)
from transcripts.adapters.cli import main
sys.argv[0] = "transcripts"
main()
"""


def command(url: str, *args: str) -> list[str]:
    return [sys.executable, "-c", CHILD, "--db", url, *args]


def peak_rss(argv: list[str], tty: bool = False) -> tuple[int, float]:
    """(peak RSS in kB, seconds) of a run of `argv`, its output thrown away."""
    env = {**os.environ, "COLUMNS": "120"}
    started = time.perf_counter()
    if tty:
        import pty
        import threading

        main, child = pty.openpty()
        process = subprocess.Popen(argv, stdout=child, stderr=subprocess.PIPE, env=env)
        os.close(child)
        drain = threading.Thread(target=_drain, args=(main,), daemon=True)
        drain.start()
    else:
        with open(os.devnull, "wb") as sink:
            process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.PIPE, env=env)
    _, stderr = process.communicate()
    seconds = time.perf_counter() - started
    if tty:
        drain.join(timeout=5)
        os.close(main)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {stderr.decode()}")
    return _peak(stderr), seconds


def _peak(stderr: bytes) -> int:
    """The peak RSS (kB) the child reported last on stderr."""
    lines = [line for line in stderr.decode().splitlines() if line.startswith("peak-kb ")]
    return int(lines[-1].split()[1])


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass


def first_lines(argv: list[str], lines: int = 3) -> float:
    """Seconds until `lines` lines of `argv`'s output were read; the pipe is then closed
    (as `| head -3` does) and the process waited for."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    for _ in range(lines):
        if not process.stdout.readline():
            break  # the end of the output
    seconds = time.perf_counter() - started
    process.stdout.close()
    _, stderr = process.communicate()
    if b"Traceback" in stderr:
        raise RuntimeError(f"{' '.join(argv)}: {stderr.decode()}")
    return seconds


def run(args, directory: Path) -> int:  # type: ignore[no-untyped-def]
    rng = random.Random(args.seed)
    print(title("cli_streaming.py", ["transcript-store", "rich"]))
    sizes = {"small": args.small, "large": args.large}
    urls = {}
    for name, messages in sizes.items():
        urls[name] = f"sqlite:///{directory / name}.db"
        started = time.perf_counter()
        build(urls[name], "s", messages, args.chars, args.compact_at)
        print(f"built {messages:,} messages in {time.perf_counter() - started:.0f} s")
    outputs = ["file", "tty"] if args.tty else ["file"]
    missed = 0
    print(f"\n(a) peak RSS, {args.large:,} vs {args.small:,} messages (median of {args.rounds})")
    print(f"{'command':<22}{'out':<6}{'small MB':>9}{'large MB':>9}{'ratio':>7}"
          f"{'small s':>9}{'large s':>9}  target <= 1.5")  # fmt: skip
    for name, words in COMMANDS.items():
        for output in outputs:
            results: dict[str, list[tuple[int, float]]] = {size: [] for size in sizes}
            for _ in range(args.rounds):
                for size in rng.sample(list(sizes), len(sizes)):
                    argv = command(urls[size], *words[:1], "s", *words[1:])
                    results[size].append(peak_rss(argv, tty=output == "tty"))
            kb = {size: statistics.median(r[0] for r in results[size]) for size in sizes}
            secs = {size: statistics.median(r[1] for r in results[size]) for size in sizes}
            ratio = kb["large"] / kb["small"]
            missed += ratio > 1.5
            print(f"{name:<22}{output:<6}{kb['small'] / 1024:>9.1f}{kb['large'] / 1024:>9.1f}"
                  f"{ratio:>7.2f}{secs['small']:>9.2f}{secs['large']:>9.2f}"
                  f"  {'met' if ratio <= 1.5 else 'NOT MET'}")  # fmt: skip
    url = f"sqlite:///{directory / 'first'}.db"
    build(url, "s", args.first_line, args.chars, args.compact_at)
    variants = {
        "history | head -3": lambda: first_lines(command(url, "history", "s")),
        "history --limit 3": lambda: first_lines(
            command(url, "history", "s", "--limit", "3"), 10**6
        ),
    }
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.rounds * 2):
        for name in rng.sample(list(variants), len(variants)):
            samples[name].append(variants[name]())
    ratios = [a / b for a, b in zip(*samples.values(), strict=True)]
    ratio = statistics.median(ratios)
    missed += ratio > 1.5
    print(f"\n(b) time to the first 3 lines, {args.first_line:,} messages")
    for name, values in samples.items():
        print(f"{name:<22}{statistics.median(values):>8.3f} s")
    print(f"{'ratio':<22}{ratio:>8.2f}    target <= 1.5: {'met' if ratio <= 1.5 else 'NOT MET'}")
    return 1 if args.check and missed else 0


def main() -> int:
    parser = new_parser(__doc__)
    add_count(parser, "--small", 1000, "messages of the small session")
    add_count(parser, "--large", 100_000, "messages of the large session")
    add_count(parser, "--first-line", 20_000, "messages of the session of (b)")
    add_count(parser, "--rounds", 3, "runs of each command per size")
    add_count(parser, "--compact-at", 500, "messages compacted first (0: a compaction last)")
    add_chars_option(parser, 400)
    parser.add_argument("--tty", action="store_true", help="also print to a pseudo-terminal")
    add_scratch_options(parser)
    add_seed_option(parser)
    add_check_option(parser)
    return run_in_scratch_directory(parser.parse_args(), run)


if __name__ == "__main__":
    raise SystemExit(main())
