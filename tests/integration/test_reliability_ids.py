"""Session ids and message ids have one documented maximum length, the same on every backend,
enforced when they are written (`InvalidMessageError` for a message id, `TranscriptError` for
a session id), and every id up to it works everywhere: start, append, active, history,
explain, the search filter, sessions and forget. The maximum is at least 1,000 characters of
any text.

The maximum is to be exposed as `transcripts.domain.messages.MAX_ID_LENGTH`; the tests import
it inside, so that a missing constant fails them with a clear message. Ids are incompressible
(seeded random letters and non-ASCII characters, up to 4 bytes each in UTF-8): an index that
compresses its keys cannot make them fit.
"""

from __future__ import annotations

import random

import pytest

from support.reads import snapshot
from transcripts import InvalidMessageError, TranscriptError, TranscriptStore

# Letters of several scripts, accented Latin, CJK, emoji: 1 to 4 bytes each in UTF-8.
ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    + "".join(chr(c) for c in range(0x00C0, 0x0180))  # Latin-1 supplement, Latin extended-A
    + "".join(chr(c) for c in range(0x0391, 0x03CA))  # Greek
    + "".join(chr(c) for c in range(0x0410, 0x0450))  # Cyrillic
    + "".join(chr(c) for c in range(0x4E00, 0x4F00))  # CJK
    + "".join(chr(c) for c in range(0x1F600, 0x1F650))  # emoji
)


def random_id(length: int, seed: int) -> str:
    """`length` characters of incompressible text, the same for the same seed."""
    rng = random.Random(seed)
    return "".join(rng.choice(ALPHABET) for _ in range(length))


def max_id_length() -> int:
    from transcripts.domain.messages import MAX_ID_LENGTH

    assert isinstance(MAX_ID_LENGTH, int) and not isinstance(MAX_ID_LENGTH, bool)
    assert MAX_ID_LENGTH >= 1000, "ids of at least 1,000 characters of any text must work"
    return MAX_ID_LENGTH


def exercise(store: TranscriptStore, session_id: str, message_id: str, parent_id: str) -> None:
    """Every per-session call with these ids works and shows them as given."""
    store.start(parent_id)
    store.start(session_id, source="ids", model="m", parent_id=parent_id)
    store.start(session_id, source="ids", model="m", parent_id=parent_id)  # same args: no-op
    message = {"id": message_id, "role": "user", "content": "the longest ids wapitiform"}
    assert store.append(session_id, [message]) == [message]
    assert store.append(session_id, [message]) == [message]  # idempotent by id
    second = {"id": message_id[::-1], "role": "assistant", "content": "a reply"}
    assert store.sync(session_id, [message, second]) == [message, second]
    assert store.active(session_id) == [message, second]
    assert [h["id"] for h in store.history(session_id)] == [message_id, message_id[::-1]]
    assert store.active_at(session_id, 2) == [message]
    explained = store.explain(session_id, message_id)
    assert (explained["session_id"], explained["message_id"], explained["active"]) == (
        session_id,
        message_id,
        True,
    )
    assert explained["position"] is not None
    summaries = {s["id"]: s for s in store.sessions()}
    assert summaries[session_id]["parent_id"] == parent_id
    assert (summaries[session_id]["messages"], summaries[session_id]["quarantined"]) == (2, 0)
    hits = store.search("wapitiform", session_id=session_id)
    assert [(h["session_id"], h["message_id"]) for h in hits] == [(session_id, message_id)]
    result = store.compact(session_id, lambda messages: [messages[0]], reason="long ids")
    assert result.committed, (result.failure, result.error)
    assert store.active(session_id) == [message]
    assert store.explain(session_id, message_id[::-1])["superseded"] is not None
    report = store.verify_projections()
    assert report.ok, report.problems
    store.rebuild_projections()
    assert store.active(session_id) == [message]
    assert store.verify_projections().ok
    erasure = store.forget(session_id)
    assert (erasure.session_id, erasure.messages) == (session_id, 2)
    assert [event["type"] for event in store.events(session_id)] == ["Erased"]
    summaries = {s["id"]: s for s in store.sessions()}
    assert summaries[session_id]["erased_at"] is not None
    assert store.search("wapitiform") == []
    assert store.verify_projections().ok


def test_ids_of_1000_characters_of_any_text_work_everywhere(store: TranscriptStore) -> None:
    exercise(store, random_id(1000, 1), random_id(1000, 2), random_id(1000, 3))


def test_ids_of_exactly_the_maximum_length_work_everywhere(store: TranscriptStore) -> None:
    length = max_id_length()
    exercise(store, random_id(length, 11), random_id(length, 12), random_id(length, 13))


def test_ids_of_the_maximum_length_in_plain_ascii_work_everywhere(store: TranscriptStore) -> None:
    length = max_id_length()
    exercise(store, "s" * length, "m" * (length - 1) + "x", "p" * length)


def test_a_session_id_one_character_over_the_maximum_is_refused_on_every_backend(
    store: TranscriptStore, store_url: str
) -> None:
    length = max_id_length()
    store.start("kept")
    store.append("kept", [{"id": "k1", "role": "user", "content": "kept"}])
    before = snapshot(store, store_url)
    too_long = random_id(length + 1, 21)
    with pytest.raises(TranscriptError) as raised:
        store.start(too_long)
    assert str(length) in str(raised.value).replace(",", "")  # names the limit
    with pytest.raises(TranscriptError):
        store.start("child", parent_id=too_long)  # a parent id is a session id
    with pytest.raises(TranscriptError):
        store.append(too_long, [{"role": "user", "content": "x"}])
    assert snapshot(store, store_url) == before
    assert store.verify_projections().ok


def test_a_message_id_one_character_over_the_maximum_is_refused_on_every_backend(
    store: TranscriptStore, store_url: str
) -> None:
    length = max_id_length()
    store.start("s")
    store.append("s", [{"id": "k1", "role": "user", "content": "kept"}])
    before = snapshot(store, store_url)
    too_long = random_id(length + 1, 31)
    fine = {"id": random_id(length, 32), "role": "user", "content": "would fit"}
    for call in (store.append, store.sync):
        with pytest.raises(InvalidMessageError) as raised:
            call("s", [fine, {"id": too_long, "role": "assistant", "content": "x"}])
        assert str(length) in str(raised.value).replace(",", "")
    assert snapshot(store, store_url) == before  # nothing of the call is stored
    assert store.verify_projections().ok


def test_ids_of_the_maximum_length_read_back_byte_for_byte_after_reopening(
    store_url: str, backend: str
) -> None:
    length = max_id_length()
    session_id, message_id = random_id(length, 41), random_id(length, 42)
    with TranscriptStore.open(store_url) as store:
        store.start(session_id)
        store.append(session_id, [{"id": message_id, "role": "user", "content": "x"}])
        if store_url == "memory://":
            assert store.active(session_id)[0]["id"] == message_id
            return
    with TranscriptStore.open(store_url) as reopened:  # from the database, not a cache
        assert reopened.active(session_id)[0]["id"].encode() == message_id.encode()
        assert [s["id"] for s in reopened.sessions()] == [session_id]
        if backend == "postgres":
            assert reopened.verify_projections().ok
