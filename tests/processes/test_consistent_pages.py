"""Every paged read is one consistent state or a `TranscriptError` (issue 36).

Processes compact a session, rewind its tail and restore what they rewound (often at once,
all of it), while other processes read its active context a page at a time: whole, its
first N and its last N messages, in pages of 2 or 3. Every list a read yields must be the
active context of some version of the session — whole, or its first or last N — as the log
holds them, folded event by event; a read that met a change between its pages raises
instead. Run on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import pytest

from support.log import log_events
from support.messages import turns
from support.processes import Spawn, program, release_together
from transcripts import TranscriptStore
from transcripts.projections.fold import SessionFold

pytestmark = pytest.mark.slow

S = "paged"
SECONDS = 8.0
N = 5  # the first and last N a read asks for
WRITERS, READERS = 2, 2


def states(url: str) -> set[tuple[str, ...]]:
    """The session's active context (its ids) at every version the log holds."""
    fold, seen = SessionFold(), set()
    for event in log_events(url, S):
        fold.apply(event)
        seen.add(tuple(fold.active_ids))
    return seen


def was(read: dict[str, Any], every: set[tuple[str, ...]]) -> bool:
    ids = tuple(read["ids"])
    if read["kind"] == "head":
        return ids in every
    if read["kind"] == "limit":
        return any(state[:N] == ids for state in every)
    return any(state[-N:] == ids for state in every)


def test_reads_a_page_at_a_time_beside_compactions_rewinds_and_restores_yield_only_lists_that_were(
    durable_url: str, spawn: Spawn
) -> None:
    with TranscriptStore.open(durable_url) as store:
        store.start(S)
        store.append(S, turns(20))
    children = [
        spawn(f"writer{i}", program("pages.py", "write", durable_url, S, str(SECONDS), str(i)))
        for i in range(WRITERS)
    ] + [
        spawn(f"reader{i}", program("pages.py", "read", durable_url, S, str(SECONDS), str(N)))
        for i in range(READERS)
    ]
    release_together(children, "ready")
    reads: list[dict[str, Any]] = []
    for child in children:
        while "done" not in (line := json.loads(child.line(SECONDS + 60))):
            reads.append(line)
        assert child.process.wait(60) == 0, child.stderr()
    every = states(durable_url)
    answered = [read for read in reads if "ids" in read]
    never_were = [read for read in answered if not was(read, every)]
    assert never_were == [], f"{len(never_were)} of {len(answered)} reads: {never_were[:3]}"
    assert len(answered) >= 30, f"too few reads to tell: {len(answered)} of {len(reads)}"
    assert {read["kind"] for read in answered} == {"head", "limit", "tail"}
    assert len(every) > 50, "the writers changed the context too little to tell"
