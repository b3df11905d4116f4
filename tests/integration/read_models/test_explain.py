"""explain(session, message) says why a message is or is not in the active context: the event
that added it (an append, or the committed compaction that added a summary), when, whether it
is active and where, which compaction superseded it, and which rewind took it out of the
context or which append restored it (see test_rewind.py)."""

from __future__ import annotations

from typing import Any

import pytest

from transcripts import SessionNotFoundError, TranscriptError, TranscriptStore
from transcripts.domain.errors import MessageNotFoundError

SESSION = "explained"


@pytest.fixture
def compacted(store: TranscriptStore) -> dict[str, Any]:
    """a1..a4 appended; a compaction keeps a4 and adds a summary; a failed one; a5 appended."""
    store.start(SESSION)
    store.append(
        SESSION,
        [
            {"id": f"a{i}", "role": ("user", "assistant")[i % 2], "content": f"m{i}"}
            for i in range(1, 5)
        ],
    )
    attempt = store.begin_compaction(SESSION)
    result = store.commit_compaction(
        attempt, [{"role": "system", "content": "summary"}, attempt.messages[-1]], reason="too long"
    )
    assert result.committed
    assert not store.compact(SESSION, lambda messages: 1 / 0, reason="fails").committed
    store.append(SESSION, [{"id": "a5", "role": "user", "content": "m5"}])
    events = store.events(SESSION)
    return {
        "compaction_id": result.compaction_id,
        "summary_id": result.messages[0]["id"],
        "events": {event["version"]: event for event in events},
        "commit": next(event for event in events if event["type"] == "CompactionCommitted"),
    }


def appended_event(compacted: dict[str, Any], message_id: str) -> dict[str, Any]:
    (event,) = [
        e
        for e in compacted["events"].values()
        if e["type"] == "MessageAppended" and e["data"]["message_id"] == message_id
    ]
    return event


def test_a_message_appended_last_is_explained_by_its_append_event_and_position(
    store: TranscriptStore, compacted: dict[str, Any]
) -> None:
    event = appended_event(compacted, "a5")
    assert store.explain(SESSION, "a5") == {
        "session_id": SESSION,
        "message_id": "a5",
        "role": "user",
        "added": {
            "event": "MessageAppended",
            "version": event["version"],
            "at": event["at"],
            "compaction_id": None,
            "reason": None,
        },
        "active": True,
        "position": 3,
        "superseded": None,
        "rewound": None,
        "restored": None,
        "message": {"id": "a5", "role": "user", "content": "m5"},
    }


def test_a_message_a_compaction_kept_is_explained_by_its_append_and_its_new_position(
    store: TranscriptStore, compacted: dict[str, Any]
) -> None:
    explained = store.explain(SESSION, "a4")
    event = appended_event(compacted, "a4")
    assert explained["added"]["event"] == "MessageAppended"
    assert (explained["added"]["version"], explained["added"]["at"]) == (
        event["version"],
        event["at"],
    )
    assert (explained["active"], explained["position"], explained["superseded"]) == (True, 2, None)


def test_a_superseded_message_names_the_compaction_that_superseded_it(
    store: TranscriptStore, compacted: dict[str, Any]
) -> None:
    commit = compacted["commit"]
    explained = store.explain(SESSION, "a2")
    assert explained["active"] is False
    assert explained["position"] is None
    assert explained["superseded"] == {
        "compaction_id": compacted["compaction_id"],
        "version": commit["version"],
        "at": commit["at"],
        "reason": "too long",
    }
    event = appended_event(compacted, "a2")
    assert explained["added"] == {
        "event": "MessageAppended",
        "version": event["version"],
        "at": event["at"],
        "compaction_id": None,
        "reason": None,
    }
    assert explained["message"] == {"id": "a2", "role": "user", "content": "m2"}


def test_a_summary_is_explained_by_the_committed_compaction_that_added_it(
    store: TranscriptStore, compacted: dict[str, Any]
) -> None:
    commit = compacted["commit"]
    explained = store.explain(SESSION, compacted["summary_id"])
    assert explained["added"] == {
        "event": "CompactionCommitted",
        "version": commit["version"],
        "at": commit["at"],
        "compaction_id": compacted["compaction_id"],
        "reason": "too long",
    }
    assert (explained["active"], explained["position"], explained["superseded"]) == (True, 1, None)
    assert explained["role"] == "system"
    assert explained["message"] == {
        "id": compacted["summary_id"],
        "role": "system",
        "content": "summary",
    }


def test_a_summary_superseded_by_a_later_compaction_names_both_compactions(
    store: TranscriptStore, compacted: dict[str, Any]
) -> None:
    later = store.compact(
        SESSION, lambda messages: [{"role": "system", "content": "again"}], reason="later"
    )
    assert later.committed
    explained = store.explain(SESSION, compacted["summary_id"])
    assert explained["added"]["compaction_id"] == compacted["compaction_id"]
    assert explained["active"] is False
    assert explained["superseded"]["compaction_id"] == later.compaction_id
    assert explained["superseded"]["reason"] == "later"
    assert explained["superseded"]["version"] == store.events(SESSION)[-1]["version"]


def test_explain_reflects_a_write_as_soon_as_it_returns(
    store: TranscriptStore, compacted: dict[str, Any]
) -> None:
    store.append(SESSION, [{"id": "fresh", "role": "user", "content": "just now"}])
    explained = store.explain(SESSION, "fresh")
    assert (explained["active"], explained["position"]) == (True, 4)
    assert explained["added"]["version"] == store.events(SESSION)[-1]["version"]


@pytest.mark.parametrize("message_id", ["never-stored", "b1", ""])
def test_explaining_a_message_the_session_never_stored_raises_message_not_found(
    store: TranscriptStore, compacted: dict[str, Any], message_id: str
) -> None:
    store.start("other")
    store.append("other", [{"id": "b1", "role": "user", "content": "in another session"}])
    with pytest.raises(MessageNotFoundError) as raised:
        store.explain(SESSION, message_id)
    assert isinstance(raised.value, TranscriptError)
    assert isinstance(raised.value, LookupError)
    assert (raised.value.session_id, raised.value.message_id) == (SESSION, message_id)
    assert SESSION in str(raised.value)


def test_explaining_a_message_of_a_session_never_started_raises_session_not_found(
    store: TranscriptStore,
) -> None:
    with pytest.raises(SessionNotFoundError):
        store.explain("nobody", "a1")
