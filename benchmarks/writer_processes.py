"""The fairness benchmark's processes: writers, a compactor, a hot and a cold writer.

Each function here is the target of a process that fair_writers.py starts (spawned, so each
is importable at module level): it opens the store, starts the one shared session, appends
(or compacts) and times every call, and puts what it did, an `Outcome`, on the `results`
queue when it ends, whatever ends it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from transcripts import TranscriptStore

SESSION = "shared"
COMPACTOR = "compactor"

T = TypeVar("T")


@dataclass
class Outcome:
    """What one process did."""

    name: str
    calls: int = 0
    latencies: list[float] = field(default_factory=list)  # seconds, successful calls
    errors: Counter[str] = field(default_factory=Counter)  # type: message head -> count
    error_latencies: list[float] = field(default_factory=list)  # seconds until it raised
    committed: int = 0  # compactor only
    failed: Counter[str] = field(default_factory=Counter)  # compactor only: failure codes

    def timed(self, call: Callable[[], T]) -> T | None:
        """Make one call and count it: its latency, or (None) its error and time until then."""
        clock = time.perf_counter
        began = clock()
        result: T | None = None
        try:
            result = call()
        except Exception as error:  # noqa: BLE001 - counted and reported
            self.errors[_error_key(error)] += 1
            self.error_latencies.append(clock() - began)
        else:
            self.latencies.append(clock() - began)
        self.calls += 1
        return result


def _error_key(error: BaseException) -> str:
    """The error's type and the head of its message, on one line."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:110]}"


@contextmanager
def _process(
    name: str, url: str, lock_timeout: float | None, results: Any
) -> Iterator[tuple[TranscriptStore, Outcome]]:
    """The store, with the shared session started, and an Outcome put on `results` at the end."""
    outcome = Outcome(name)
    try:
        with TranscriptStore.open(url, lock_timeout=lock_timeout) as store:
            store.start(SESSION)
            yield store, outcome
    finally:
        results.put(outcome)


def _append(store: TranscriptStore, name: str, n: int, content: str) -> Callable[[], object]:
    """The call that appends message `name`-`n` to the shared session."""
    message = {"id": f"{name}-{n}", "role": "user", "content": content}
    return lambda: store.append(SESSION, [message])


def writer(
    url: str, name: str, lock_timeout: float | None, barrier: Any, seconds: float, results: Any
) -> None:
    """Append one message per call to the shared session in a tight loop for `seconds`."""
    with _process(name, url, lock_timeout, results) as (store, outcome):
        barrier.wait()
        deadline = time.perf_counter() + seconds
        n = 0
        while time.perf_counter() < deadline:
            n += 1
            outcome.timed(_append(store, name, n, f"{name} says {n}"))


def _summarize(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A summary, then the last two messages."""
    return [{"role": "system", "content": f"summary of {len(messages)}"}, *messages[-2:]]


def compactor(
    url: str, lock_timeout: float | None, barrier: Any, seconds: float, every: float, results: Any
) -> None:
    """Compact the shared session every `every` seconds (keep the last two messages)."""
    with _process(COMPACTOR, url, lock_timeout, results) as (store, outcome):
        barrier.wait()
        deadline = time.perf_counter() + seconds
        while time.perf_counter() + every < deadline:
            time.sleep(every)
            result = outcome.timed(lambda: store.compact(SESSION, _summarize, reason="benchmark"))
            if result is None:
                continue
            if result.committed:
                outcome.committed += 1
            else:
                outcome.failed[result.failure or "?"] += 1


def hot_writer(url: str, lock_timeout: float | None, ready: Any, stop: Any, results: Any) -> None:
    """Append in a tight loop until `stop` is set."""
    with _process("hot writer", url, lock_timeout, results) as (store, outcome):
        store.append(SESSION, [{"role": "user", "content": "warm-up"}])
        ready.set()
        n = 0
        while not stop.is_set():
            n += 1
            outcome.timed(_append(store, "hot", n, f"hot {n}"))


def cold_writer(
    url: str, lock_timeout: float | None, ready: Any, seconds: float, interval: float, results: Any
) -> None:
    """Append once every `interval` seconds for `seconds`, timing each append."""
    clock = time.perf_counter
    with _process("cold writer", url, lock_timeout, results) as (store, outcome):
        ready.wait(120)
        deadline = clock() + seconds
        n = 0
        while (began := clock()) < deadline:
            n += 1
            outcome.timed(_append(store, "cold", n, f"cold {n}"))
            time.sleep(max(0.0, interval - (clock() - began)))
