"""sync: the agent's flush stores what is new, in order, skips every stored id, active or
superseded, and hands back the active list."""

from __future__ import annotations

from support.messages import ids, summary
from transcripts import TranscriptStore


def test_sync_stores_new_messages_in_order_and_returns_the_active_list(
    store: TranscriptStore, session: str, turns
) -> None:
    live = turns(4)
    active = store.sync(session, live)
    assert active == store.active(session)
    assert [{k: v for k, v in m.items() if k != "id"} for m in active] == live


def test_sync_skips_stored_messages_and_appends_the_new_ones_after_them_in_order(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(3, prefix="old"))
    new = turns(3, prefix="new")
    active = store.sync(session, [*stored, *new])
    assert active[:3] == stored
    assert [{k: v for k, v in m.items() if k != "id"} for m in active[3:]] == new
    assert len(store.history(session)) == 6


def test_sync_keeps_the_ids_of_new_messages_that_carry_one(
    store: TranscriptStore, session: str
) -> None:
    live = [
        {"id": "client-1", "role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    active = store.sync(session, live)
    assert active[0] == {"id": "client-1", "role": "user", "content": "hi"}
    assert active[1]["id"] != "client-1"


def test_syncing_the_returned_list_again_stores_nothing(
    store: TranscriptStore, session: str, turns
) -> None:
    active = store.sync(session, turns(4))
    events = store.events(session)
    assert store.sync(session, active) == active
    assert store.sync(session, active) == active
    assert store.events(session) == events


def test_a_stale_pre_compaction_list_never_brings_back_superseded_messages(
    store: TranscriptStore, session: str, turns
) -> None:
    stale = store.sync(session, turns(6))
    result = store.compact(session, lambda messages: [summary(), messages[-1]])
    assert result.committed
    events = store.events(session)
    assert store.sync(session, stale) == result.messages
    assert store.sync(session, list(reversed(stale))) == result.messages
    assert store.events(session) == events
    assert ids(store.active(session)) == [result.messages[0]["id"], stale[-1]["id"]]


def test_new_messages_after_a_stale_list_are_appended_in_order_after_the_compacted_context(
    store: TranscriptStore, session: str, turns
) -> None:
    stale = store.sync(session, turns(6))
    compacted = store.compact(session, lambda messages: [summary()]).messages
    new = turns(2, prefix="after")
    active = store.sync(session, [*stale, *new])
    assert active[:1] == compacted
    assert [{k: v for k, v in m.items() if k != "id"} for m in active[1:]] == new
    assert len(store.history(session)) == 6 + 1 + 2
    superseded = [entry for entry in store.history(session) if not entry["active"]]
    assert ids([entry["message"] for entry in superseded]) == ids(stale)
