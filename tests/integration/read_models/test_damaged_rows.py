"""A view row that cannot be read — its JSON broken, its time damaged — is a `StorageError`
naming the row for every read that meets it (it was a bare orjson.JSONDecodeError or
ValueError), `verify_projections` reports it as a problem of its own kind, `unreadable`, and a
rebuild writes it again. Writes go on: the log decides what they store, and what they
answer comes from it where the views cannot say."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from support.log import fold_of
from support.messages import summary, turns
from support.rows import query
from transcripts import StorageError, TranscriptStore

S = "s"
# What is damaged, the reads that must name it, and (view, key) verify reports.
DAMAGE: dict[str, tuple[str, list[str], tuple[str, str]]] = {
    "an active message's JSON": (
        "UPDATE message_history SET message = '{broken' WHERE message_id = 'm4'",
        ["active", "history", "iter_active"],
        ("message_history", "m4"),
    ),
    "an active message's JSON, made two values": (
        """UPDATE message_history SET message = '{"id": "m4"}, {"id": "x"}'
        WHERE message_id = 'm4'""",
        ["active", "history", "iter_active"],
        ("message_history", "m4"),
    ),
    "a superseded message's JSON": (
        "UPDATE message_history SET message = '[1, ' WHERE message_id = 'm0'",
        ["history", "iter_history"],
        ("message_history", "m0"),
    ),
    "a message's time": (
        "UPDATE message_history SET appended_at = 'yesterday' WHERE message_id = 'm1'",
        ["history"],
        ("message_history", "m1"),
    ),
    "a session's time": (
        "UPDATE sessions SET started_at = 'not a time' WHERE session_id = 's'",
        ["sessions"],
        ("sessions", "s"),
    ),
    "a session's metadata": (
        "UPDATE sessions SET metadata = '{' WHERE session_id = 's'",
        ["sessions"],
        ("sessions", "s"),
    ),
    "a compaction's ids": (
        "UPDATE compaction_attempts SET superseded_ids = 'not json' WHERE session_id = 's'",
        ["compactions"],
        ("compaction_attempts", "cmp"),
    ),
}
READS: dict[str, Callable[[TranscriptStore], object]] = {
    "active": lambda store: store.active(S),
    "history": lambda store: store.history(S),
    "sessions": lambda store: store.sessions(),
    "compactions": lambda store: store.compactions(S),
    "iter_active": lambda store: list(store.iter_active(S)),
    "iter_history": lambda store: list(store.iter_history(S)),
}


@pytest.fixture
def damaged(sqlite_url: str, request: pytest.FixtureRequest) -> str:
    with TranscriptStore.open(sqlite_url) as store:
        store.start(S, metadata={"k": 1})
        store.append(S, [{"id": f"m{i}", **turn} for i, turn in enumerate(turns(5))])
        attempt = store.begin_compaction(S)
        store.commit_compaction(attempt, [summary(), *attempt.messages[-2:]])
    query(sqlite_url, "UPDATE compaction_attempts SET compaction_id = 'cmp'")
    query(sqlite_url, DAMAGE[request.param][0])
    return sqlite_url


@pytest.mark.parametrize("damaged", DAMAGE, indirect=True)
def test_a_read_meeting_a_damaged_view_row_is_a_storage_error_naming_it(
    damaged: str, request: pytest.FixtureRequest
) -> None:
    _, reads, (view, key) = DAMAGE[request.node.callspec.params["damaged"]]
    with TranscriptStore.open(damaged) as store:
        for read in reads:
            with pytest.raises(StorageError) as raised:
                READS[read](store)
            message = str(raised.value)
            assert f"the {view} row of" in message or "active_messages row of" in message
            assert "rebuild" in message


@pytest.mark.parametrize("damaged", DAMAGE, indirect=True)
def test_verify_reports_a_damaged_view_row_as_unreadable_and_a_rebuild_repairs_it(
    damaged: str, request: pytest.FixtureRequest
) -> None:
    _, _, (view, key) = DAMAGE[request.node.callspec.params["damaged"]]
    with TranscriptStore.open(damaged) as store:
        report = store.verify_projections()
        unreadable = {(p.view, p.key) for p in report.problems if p.kind == "unreadable"}
        assert (view, key) in unreadable, report.problems
        assert not [p for p in report.problems if p.kind == "missing" and p.key == key]
        store.rebuild_projections()
        assert store.verify_projections().ok
        assert store.active(S) == fold_of(damaged, S).active()


@pytest.mark.parametrize("damaged", DAMAGE, indirect=True)
def test_writes_go_on_past_a_damaged_view_row_and_answer_what_the_log_holds(damaged: str) -> None:
    with TranscriptStore.open(damaged) as store:
        synced = store.sync(S, [{"id": "m4", "role": "user", "content": "turn 4"}, *turns(1, "x")])
        assert synced == fold_of(damaged, S).active()
        (popped,) = store.rewind(S, count=1)
        assert popped == synced[-1]
