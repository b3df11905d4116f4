"""The peers benchmark's operations: what is timed, and the (untimed) seeding before it.

Used by peers.py. Each operation's `prepare` seeds one store through its adapter and returns
the per-round setup the harness calls before each round: it returns the call to time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import harness
from peer_stores import Adapter

CONTEXT = 50
LONG = 10_000
CHARS = 400


@cache
def made_up() -> list[dict[str, Any]]:
    """10,000 made-up messages of alternating roles, made once."""
    return [harness.make_message(CHARS, n) for n in range(LONG)]


def messages(count: int) -> list[dict[str, Any]]:
    """The first `count` made-up messages."""
    return made_up()[:count]


Prepare = Callable[[Adapter], harness.Setup]  # seeds once; returns the per-round setup


@dataclass(frozen=True)
class Operation:
    """What is timed: `prepare` seeds (untimed) and returns the per-round setup."""

    name: str
    what: str
    calls: int  # timed calls per round
    prepare: Prepare
    fresh: bool = False  # a new session every round: fewer rounds, no warm-up
    skip: Callable[[Adapter, bool], str | None] = lambda adapter, quick: None  # why not


def turn(adapter: Adapter) -> harness.Setup:
    """Append one message, then read the context of 50, in a 1,000-message session."""
    adapter.seed("turn", messages(1000))
    message = adapter.native(messages(1))

    def cycle() -> None:
        adapter.append("turn", message)
        adapter.context("turn", CONTEXT)

    def setup() -> harness.Call:
        adapter.settle("turn", CONTEXT)
        return cycle

    return setup


def one_append(adapter: Adapter) -> harness.Setup:
    """One message, one call, to a short session."""
    adapter.start("short")
    message = adapter.native(messages(1))
    return harness.same_call(lambda: adapter.append("short", message))


def long_append(adapter: Adapter) -> harness.Setup:
    """One message, one call, to a session of 10,000 messages."""
    adapter.seed("long", messages(LONG))
    message = adapter.native(messages(1))
    return harness.same_call(lambda: adapter.append("long", message))


def resume(adapter: Adapter) -> harness.Setup:
    """The context of 50 of a 10,000-message session."""
    adapter.seed("resume", messages(LONG))
    adapter.settle("resume", CONTEXT)
    return harness.same_call(lambda: adapter.context("resume", CONTEXT))


def load_all(adapter: Adapter) -> harness.Setup:
    """A context of 10,000 messages, whole."""
    adapter.seed("all", messages(LONG))
    return harness.same_call(lambda: adapter.context("all", None))


def compaction(adapter: Adapter) -> harness.Setup:
    """10,000 → 50, a new 10,000-message session every round."""
    rounds = iter(range(1_000_000))

    def setup() -> harness.Call:
        session = f"compact-{next(rounds)}"
        adapter.seed(session, messages(LONG))
        return lambda: adapter.compact(session, CONTEXT)

    return setup


def bulk(read: bool) -> Prepare:
    """10,000 messages in calls of 100 to a new session every round; with `read`, the whole
    context read after each call."""

    def prepare(adapter: Adapter) -> harness.Setup:
        rounds = iter(range(1_000_000))
        batches = [adapter.native(messages(LONG)[n : n + 100]) for n in range(0, LONG, 100)]

        def setup() -> harness.Call:
            session = f"bulk-{next(rounds)}"
            adapter.start(session)

            def load() -> None:
                for batch in batches:
                    adapter.append(session, batch)
                    if read:
                        adapter.context(session, None)

            return load

        return setup

    return prepare


def not_in_batches(adapter: Adapter, quick: bool) -> str | None:
    """Why a store is left out of the bulk operations, if it is."""
    if not adapter.batch_appends:
        return "its API appends one message per transaction (10,000 commits)"
    return None


def not_reading_fast(adapter: Adapter, quick: bool) -> str | None:
    """Why a store is left out of bulk-read, if it is."""
    if quick and adapter.slow_reads:
        return "with --quick: its reads of thousands of messages take a minute a round"
    return not_in_batches(adapter, quick)


OPERATIONS = {
    op.name: op
    for op in (
        Operation("turn", "append 1, then read the context of 50, 1,000-message session", 20, turn),
        Operation("append", "append 1 message (one call), short session", 20, one_append),
        Operation("append-10k", "append 1 message, 10,000 messages of history", 20, long_append),
        Operation("resume", "load the context of 50 of 10,000 messages", 20, resume),
        Operation("load-all", "load a context of 10,000 messages", 3, load_all),
        Operation("compact", "compaction 10,000 -> 50", 1, compaction, fresh=True),
        Operation("bulk", "10,000 in calls of 100", 1, bulk(False), True, not_in_batches),
        Operation(
            "bulk-read",
            "the same, the context read after each",
            1,
            bulk(True),
            True,
            not_reading_fast,
        ),  # fmt: skip
    )
}
