"""A session's state (a JSON object kept in the log beside its messages, `SetState`) and
several changes to one session written as one transaction (`write`): what a framework's
record of a conversation and its saves build on."""

from __future__ import annotations

import pytest

from support.log import expected_summary, fold_of
from support.messages import summary, turns
from transcripts import (
    Append,
    Compact,
    Rewind,
    SessionErasedError,
    SessionNotFoundError,
    SetState,
    TranscriptError,
    TranscriptStore,
    VersionConflictError,
)


@pytest.fixture
def session(store: TranscriptStore) -> str:
    store.start("s", source="framework")
    return "s"


def test_a_new_session_has_an_empty_state(store: TranscriptStore, session: str) -> None:
    assert store.session(session)["state"] == {}
    assert [entry["state"] for entry in store.sessions()] == [{}]


def test_set_state_sets_and_removes_keys_and_keeps_the_others(
    store: TranscriptStore, session: str
) -> None:
    store.write(session, [SetState({"title": "Trip", "head": "m1", "usage": {"tokens": 10}})])
    store.write(session, [SetState({"head": "m2"}, remove=["title"])])
    assert store.session(session)["state"] == {"head": "m2", "usage": {"tokens": 10}}
    [event] = store.events(session)[-1:]
    assert (event["type"], event["data"]) == (
        "StateChanged",
        {"values": {"head": "m2"}, "removed": ["title"]},
    )


def test_a_state_change_that_changes_nothing_stores_nothing(
    store: TranscriptStore, session: str
) -> None:
    version = store.write(session, [SetState({"title": "Trip", "n": 1})])
    assert store.write(session, [SetState({"title": "Trip"}, remove=["absent"])]) == version
    assert store.write(session, [SetState({"n": 1.0})]) == version + 1  # 1.0 is not 1 in JSON
    assert store.version(session) == version + 1


def test_session_reads_one_sessions_entry_with_its_state_and_version_together(
    store: TranscriptStore, session: str
) -> None:
    store.append(session, turns(2))
    version = store.write(session, [SetState({"head": "m2"})])
    entry = store.session(session)
    assert entry == next(e for e in store.sessions() if e["id"] == session)
    assert (entry["version"], entry["state"], entry["messages"]) == (version, {"head": "m2"}, 2)
    with pytest.raises(SessionNotFoundError):
        store.session("nobody")


def test_sessions_of_a_source_are_listed_alone(store: TranscriptStore, session: str) -> None:
    store.start("other", source="cli")
    assert [entry["id"] for entry in store.sessions(source="framework")] == [session]
    assert [entry["id"] for entry in store.sessions(source="nothing")] == []
    assert {entry["id"] for entry in store.sessions()} == {session, "other"}


def test_a_state_that_is_no_json_object_is_refused_before_anything_is_stored(
    store: TranscriptStore, session: str
) -> None:
    for change in [
        SetState(["title"]),  # type: ignore[arg-type]
        SetState({"n": float("nan")}),
        SetState({"when": object()}),
        SetState({"title": "x"}, remove=["title"]),
        SetState(remove="title"),  # type: ignore[arg-type]
    ]:
        with pytest.raises(TranscriptError):
            store.write(session, [change])
    assert store.version(session) == 1


def test_the_state_is_what_the_log_says_after_a_rebuild_and_in_a_fresh_store_object(
    durable_url: str,
) -> None:
    with TranscriptStore.open(durable_url) as store:
        store.start("s")
        store.write("s", [SetState({"title": "Trip", "branches": ["a", "b"]})])
        store.write("s", [SetState({"title": None}, remove=["branches"])])
        store.rebuild_projections()
        assert store.session("s")["state"] == {"title": None}
        assert store.verify_projections().ok
    with TranscriptStore.open(durable_url) as again:
        assert again.session("s") == expected_summary(fold_of(durable_url, "s"))


def test_forget_erases_the_state(store: TranscriptStore, session: str) -> None:
    store.write(session, [SetState({"title": "a secret"})])
    store.forget(session)
    assert store.session(session)["state"] == {}
    with pytest.raises(SessionErasedError):
        store.write(session, [SetState({"title": "again"})])


def test_write_makes_its_changes_in_order_in_one_transaction(
    store: TranscriptStore, session: str
) -> None:
    stored = store.append(session, turns(2))
    version = store.write(
        session,
        [
            Rewind(count=1, reason="regenerate"),
            Append([{"id": "new1", "role": "assistant", "content": "again"}]),
            SetState({"head": "new1"}),
        ],
        expected_version=store.version(session),
    )
    assert version == store.version(session) == 6
    types = [event["type"] for event in store.events(session)[-3:]]
    assert types == ["Rewound", "MessageAppended", "StateChanged"]
    assert [m["id"] for m in store.active(session)] == [stored[0]["id"], "new1"]


def test_a_write_at_another_version_raises_and_stores_nothing(
    store: TranscriptStore, session: str
) -> None:
    store.append(session, turns(2))
    with pytest.raises(VersionConflictError) as conflict:
        store.write(
            session, [Append(turns(1, prefix="late")), SetState({"x": 1})], expected_version=1
        )
    assert (conflict.value.expected, conflict.value.actual) == (1, 3)
    assert store.version(session) == 3 and store.session(session)["state"] == {}


def test_a_write_that_changes_nothing_is_a_no_op_at_any_version(
    store: TranscriptStore, session: str
) -> None:
    stored = store.append(session, turns(2))
    store.write(session, [SetState({"x": 1})])
    assert store.write(session, [Append(stored), SetState({"x": 1})], expected_version=1) == 4


def test_a_compaction_in_a_write_replaces_the_active_context_as_it_stands_at_its_turn(
    store: TranscriptStore, session: str
) -> None:
    first = store.append(session, turns(3))
    new = [{"id": "new1", "role": "user", "content": "next"}]
    store.write(
        session,
        [
            Append(new),
            Compact(
                [{"id": "sum", **summary()}, first[2], new[0]],
                reason="over budget",
                metadata={"handler": "summarizing"},
            ),
            SetState({"head": "new1"}),
        ],
        expected_version=4,
    )
    assert [m["id"] for m in store.active(session)] == ["sum", first[2]["id"], "new1"]
    [audit] = store.compactions(session)
    assert (audit["superseded"], audit["added"], audit["reason"], audit["metadata"]) == (
        [first[0]["id"], first[1]["id"]],
        ["sum"],
        "over budget",
        {"handler": "summarizing"},
    )
    assert store.verify_projections().ok


def test_a_compaction_made_for_an_earlier_version_is_a_conflict_not_a_failure(
    store: TranscriptStore, session: str
) -> None:
    stored = store.append(session, turns(2))
    store.rewind(session, count=1)  # the replacement below keeps what another writer rewound
    with pytest.raises(VersionConflictError):
        store.write(session, [Compact([summary(), stored[1]])], expected_version=3)
    assert store.compactions(session) == []


def test_a_write_that_compacts_needs_an_expected_version(
    store: TranscriptStore, session: str
) -> None:
    store.append(session, turns(2))
    with pytest.raises(TranscriptError, match="expected_version"):
        store.write(session, [Compact([summary()])])
    assert store.compactions(session) == []


def test_a_compaction_that_cannot_commit_stores_nothing_of_its_write(
    store: TranscriptStore, session: str
) -> None:
    stored = store.append(session, turns(2))
    edited = {**stored[0], "content": "edited"}
    with pytest.raises(TranscriptError, match="invalid_replacement"):
        store.write(
            session, [Append(turns(1, prefix="new")), Compact([edited])], expected_version=3
        )
    assert store.version(session) == 3 and store.compactions(session) == []


def test_changes_that_are_not_changes_are_refused(store: TranscriptStore, session: str) -> None:
    with pytest.raises(TranscriptError, match="not an Append"):
        store.write(session, [{"role": "user", "content": "a message, not a change"}])
    with pytest.raises(TranscriptError, match="list of changes"):
        store.write(session, SetState({"x": 1}))  # type: ignore[arg-type]
    with pytest.raises(SessionNotFoundError):
        store.write("nobody", [SetState({"x": 1})])
