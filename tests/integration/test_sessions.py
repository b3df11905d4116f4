"""Sessions: start is idempotent, unknown sessions are refused everywhere, and sessions()
lists every session with its counts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest

from transcripts import SessionNotFoundError, TranscriptError, TranscriptStore


def test_starting_a_session_again_with_the_same_arguments_is_a_no_op(
    store: TranscriptStore,
) -> None:
    arguments = {
        "source": "cli",
        "model": "m",
        "parent_id": "p",
        "metadata": {"cwd": "/", "n": [1]},
    }
    store.start("s", **arguments)
    events = store.events("s")
    store.start("s", **arguments)
    store.start("s", **{**arguments, "metadata": {"n": [1], "cwd": "/"}})
    assert store.events("s") == events
    assert len(store.sessions()) == 1


def test_starting_a_session_again_with_defaults_is_a_no_op(store: TranscriptStore) -> None:
    store.start("s")
    store.start("s", source="api", model=None, parent_id=None, metadata={})
    assert len(store.events("s")) == 1


@pytest.mark.parametrize(
    "changed",
    [
        {"source": "web"},
        {"model": "other"},
        {"model": None},
        {"parent_id": "q"},
        {"metadata": {"cwd": "/x"}},
        {"metadata": None},
    ],
    ids=["source", "model", "model dropped", "parent", "metadata", "metadata dropped"],
)
def test_starting_a_session_again_with_other_arguments_raises_and_changes_nothing(
    store: TranscriptStore, changed: dict
) -> None:
    arguments = {"source": "cli", "model": "m", "parent_id": "p", "metadata": {"cwd": "/"}}
    store.start("s", **arguments)
    events = store.events("s")
    with pytest.raises(TranscriptError):
        store.start("s", **{**arguments, **changed})
    assert store.events("s") == events


PER_SESSION: dict[str, Callable[[TranscriptStore, str], object]] = {
    "active": lambda store, s: store.active(s),
    "history": lambda store, s: store.history(s),
    "append": lambda store, s: store.append(s, [{"role": "user", "content": "hi"}]),
    "append nothing": lambda store, s: store.append(s, []),
    "sync": lambda store, s: store.sync(s, [{"role": "user", "content": "hi"}]),
    "compactions": lambda store, s: store.compactions(s),
    "events": lambda store, s: store.events(s),
    "active_at": lambda store, s: store.active_at(s, 1),
    "begin_compaction": lambda store, s: store.begin_compaction(s),
    "compact": lambda store, s: store.compact(s, lambda messages: []),
}


@pytest.mark.parametrize("call", PER_SESSION.values(), ids=PER_SESSION.keys())
def test_every_per_session_method_raises_session_not_found_for_a_session_never_started(
    store: TranscriptStore, call: Callable[[TranscriptStore, str], object]
) -> None:
    store.start("known")
    with pytest.raises(SessionNotFoundError) as raised:
        call(store, "unknown")
    assert isinstance(raised.value, TranscriptError)
    assert [session["id"] for session in store.sessions()] == ["known"]


def test_sessions_is_empty_for_a_new_store(store: TranscriptStore) -> None:
    assert store.sessions() == []


def test_sessions_lists_every_session_in_start_order_with_its_fields_and_counts(
    store: TranscriptStore, turns
) -> None:
    store.start("parent", source="cli", model="model-a")
    store.start("child", parent_id="parent")
    store.start("empty", source="web")
    stored = store.append("parent", turns(5))
    store.compact("parent", lambda messages: 1 / 0)
    store.compact(
        "parent", lambda messages: [{"role": "system", "content": "summary"}, messages[-1]]
    )
    store.compact("parent", lambda messages: ["invalid"])
    store.append("child", turns(2))
    sessions = {session["id"]: session for session in store.sessions()}
    assert list(sessions) == ["parent", "child", "empty"]
    parent, child, empty = sessions.values()
    assert (parent["source"], parent["model"], parent["parent_id"]) == ("cli", "model-a", None)
    assert (child["source"], child["model"], child["parent_id"]) == ("api", None, "parent")
    assert (empty["source"], empty["model"], empty["parent_id"]) == ("web", None, None)
    for session in sessions.values():
        assert isinstance(session["started_at"], datetime)
    assert parent["started_at"] <= child["started_at"] <= empty["started_at"]
    counts = ("messages", "active", "compactions_committed", "compactions_failed")
    assert [parent[key] for key in counts] == [len(stored) + 1, 2, 1, 2]
    assert [child[key] for key in counts] == [2, 2, 0, 0]
    assert [empty[key] for key in counts] == [0, 0, 0, 0]
    assert parent["messages"] == len(store.history("parent"))
    assert parent["active"] == len(store.active("parent"))


def test_sessions_lists_more_sessions_than_fit_in_one_page(store: TranscriptStore) -> None:
    names = [f"s{i:04}" for i in range(1200)]
    for name in names:
        store.start(name)
    assert [session["id"] for session in store.sessions()] == names


@pytest.mark.parametrize("session_id", ["a/b", "ünï 🦜", "x" * 500, " "])
def test_any_non_empty_string_is_a_session_id(store: TranscriptStore, session_id: str) -> None:
    store.start(session_id)
    store.append(session_id, [{"role": "user", "content": "hi"}])
    assert [session["id"] for session in store.sessions()] == [session_id]
    assert len(store.active(session_id)) == 1
