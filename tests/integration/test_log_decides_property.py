"""Property: with view rows damaged at random between random commands — rows lost, contents
altered, messages marked rewound or active, JSON broken, a session's row lost or its version
changed, a bogus quarantine — by several store objects on one file (and stores opened
afresh, which resume sessions from the log's index), the log never holds an id twice: no
second `MessageAppended` of a stored id but the restore of a rewound one, no superseded id
back in the context (the fold of the log refuses either). No valid write is refused: an
append or sync raises `MessageConflictError` exactly when the log holds a given id with
other content, and nothing else; a rewind and a compaction once begun never raise. Then a
rebuild repairs the views: verify finds nothing, nothing is quarantined."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from itertools import count
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.log import fold_of
from support.rows import query
from transcripts import MessageConflictError, TranscriptError, TranscriptStore
from transcripts.domain.transcript import transcript_id

EXAMPLES = int(os.environ.get("LOG_DECIDES_EXAMPLES", "40"))  # raise it to search longer
SESSIONS = ("s0", "s1")
POOL = ("p0", "p1", "p2", "p3", "p4", "p5")  # ids users give, repeated across calls
STORES = 2


def pooled(message_id: str, variant: int) -> dict[str, Any]:
    """A message with a pooled id; variant 0 is the content users send it with, 1 another."""
    return {"id": message_id, "role": "user", "content": f"{message_id} variant {variant}"}


def _history(url: str, sets: str, params: tuple[Any, ...], session: str, message_id: str) -> None:
    query(
        url,
        f"UPDATE message_history SET {sets} WHERE session_id = ? AND message_id = ?",
        (*params, session, message_id),
    )


DAMAGE: dict[str, Callable[[str, str, str], None]] = {
    "lose its history row": lambda url, s, i: query(
        url, "DELETE FROM message_history WHERE session_id = ? AND message_id = ?", (s, i)
    ),
    "alter its content": lambda url, s, i: _history(
        url, "message = ?", (json.dumps({"id": i, "role": "user", "content": "altered"}),), s, i
    ),
    "mark it rewound": lambda url, s, i: _history(
        url, "active = 0, superseded_by = NULL, rewound_version = 2, position = NULL", (), s, i
    ),
    "mark it active": lambda url, s, i: _history(
        url, "active = 1, superseded_by = NULL, rewound_version = NULL", (), s, i
    ),
    "break its JSON": lambda url, s, i: _history(url, "message = ?", ("{not json",), s, i),
    "lose its session's row": lambda url, s, i: query(
        url, "DELETE FROM sessions WHERE session_id = ?", (s,)
    ),
    "change its session's version": lambda url, s, i: query(
        url, "UPDATE sessions SET version = version + 5 WHERE session_id = ?", (s,)
    ),
    "quarantine a readable event": lambda url, s, i: query(
        url,
        "INSERT INTO quarantined_events VALUES (?, ?, ?, 2, 'transcripts:Transcript.X', 'bogus')",
        (10**9 + len(query(url, "SELECT 1 FROM quarantined_events")), transcript_id(s).hex, s),
    ),
}


class Run:
    """Interprets one generated sequence of operations against a store file."""

    def __init__(self, directory: Path) -> None:
        self.url = f"sqlite:///{directory / 'store.db'}"
        self.stores = [TranscriptStore.open(self.url) for _ in range(STORES)]
        for session_id in SESSIONS:
            self.stores[0].start(session_id)
        self.fresh = count()

    def close(self) -> None:
        for store in self.stores:
            store.close()

    def messages(self, items: list[tuple[str, int] | None]) -> list[dict[str, Any]]:
        return [
            pooled(*item) if item else {"role": "user", "content": f"new {next(self.fresh)}"}
            for item in items
        ]

    def do(self, op: tuple[Any, ...]) -> None:
        getattr(self, op[0])(*op[1:])
        for session_id in SESSIONS:
            fold_of(self.url, session_id)  # raises on an id stored twice, a superseded id back

    # -- commands ------------------------------------------------------------------------

    def append(self, store: int, session_id: str, items: list[tuple[str, int] | None]) -> None:
        self._write(self.stores[store].append, session_id, self.messages(items))

    def sync(self, store: int, session_id: str, items: list[tuple[str, int] | None]) -> None:
        self._write(self.stores[store].sync, session_id, self.messages(items))

    def _write(self, call: Callable[..., object], session_id: str, messages: list[dict]) -> None:
        stored = {i: e.message for i, e in fold_of(self.url, session_id).entries.items()}
        given: dict[str, dict] = {}
        conflict = False
        for message in messages:
            if "id" not in message:
                continue
            content = {k: v for k, v in message.items() if k != "id"}
            known = stored.get(message["id"], given.get(message["id"]))
            conflict |= known is not None and known != content
            given[message["id"]] = content
        try:
            call(session_id, messages)
        except MessageConflictError:
            assert conflict, "a valid write was refused"
        else:
            assert not conflict, "a conflicting write was stored"

    def rewind(self, store: int, session_id: str, count: int) -> None:
        self.stores[store].rewind(session_id, count=count)

    def compact(self, store: int, session_id: str, keep: int) -> None:
        store_ = self.stores[store]
        try:
            attempt = store_.begin_compaction(session_id)  # reads the views: may fail
        except TranscriptError:
            return
        kept = attempt.messages[len(attempt.messages) - keep :] if keep else []
        store_.commit_compaction(attempt, [{"role": "system", "content": "summary"}, *kept])

    def damage(self, kind: str, session_id: str, row: int) -> None:
        ids = query(
            self.url,
            "SELECT message_id FROM message_history WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
        if ids:
            DAMAGE[kind](self.url, session_id, ids[row % len(ids)][0])

    def reopen(self, store: int) -> None:
        self.stores[store].close()
        self.stores[store] = TranscriptStore.open(self.url)

    # -- the end -------------------------------------------------------------------------

    def check(self) -> None:
        store = self.stores[0]
        store.rebuild_projections()
        report = store.verify_projections()
        assert report.ok, [str(problem) for problem in report.problems]
        assert all(status.quarantined == 0 for status in store.projection_status())
        for session_id in SESSIONS:
            assert store.active(session_id) == fold_of(self.url, session_id).active()


stores = st.integers(0, STORES - 1)
sessions = st.sampled_from(SESSIONS)
items = st.lists(
    st.one_of(st.none(), st.tuples(st.sampled_from(POOL), st.sampled_from([0, 0, 0, 1]))),
    min_size=1,
    max_size=4,
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("append"), stores, sessions, items),
        st.tuples(st.just("sync"), stores, sessions, items),
        st.tuples(st.just("rewind"), stores, sessions, st.integers(1, 3)),
        st.tuples(st.just("compact"), stores, sessions, st.integers(0, 3)),
        st.tuples(st.just("damage"), st.sampled_from(list(DAMAGE)), sessions, st.integers(0, 20)),
        st.tuples(st.just("reopen"), stores),
    ),
    max_size=30,
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations)
def test_whatever_the_views_say_the_log_never_holds_an_id_twice_and_a_rebuild_repairs_them(
    ops: list[tuple[Any, ...]],
) -> None:
    directory = Path(tempfile.mkdtemp(prefix="log-decides-"))
    run = Run(directory)
    try:
        for op in ops:
            run.do(op)
        run.check()
    finally:
        run.close()
        shutil.rmtree(directory, ignore_errors=True)


def test_the_property_meets_every_damage_in_one_long_sequence(tmp_path: Path) -> None:
    """A fixed sequence that damages each kind of row and writes past it from every kind of
    store object, so the property never passes vacuously."""
    run = Run(tmp_path)
    try:
        run.do(("append", 0, "s0", [("p0", 0), ("p1", 0), None, ("p2", 0)]))
        run.do(("append", 1, "s1", [("p0", 1), None]))
        run.do(("compact", 0, "s0", 2))  # p0, p1 and the new message superseded
        run.do(("rewind", 1, "s0", 1))  # p2 rewound
        for kind in DAMAGE:
            for row in range(5):
                run.do(("damage", kind, "s0", row))
                run.do(("reopen", row % STORES))
                run.do(("sync", row % STORES, "s0", [("p0", 0), ("p1", 0), ("p2", 0)]))
                run.do(("append", 1 - row % STORES, "s0", [("p1", 0), ("p3", 0)]))
                run.do(("append", row % STORES, "s0", [None, ("p0", 1)]))  # a conflict
                run.do(("append", 0, "s0", [("p2", 0)]))  # a restore, once
        run.do(("compact", 1, "s0", 1))
        run.do(("rewind", 0, "s0", 2))
        run.check()
    finally:
        run.close()
