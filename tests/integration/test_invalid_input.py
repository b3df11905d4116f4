"""Invalid messages raise InvalidMessageError (a ValueError), store nothing, and leave the
session working normally."""

from __future__ import annotations

import pytest

from support.corpus import MESSAGES
from transcripts import InvalidMessageError, TranscriptError, TranscriptStore


def nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = [value]
    return value


# Values JSON text cannot hold; the ones it can are the corpus (tests/data/hostile_messages.json).
INVALID = {
    "a set value": {"role": "user", "content": {"a", "b"}},
    "an object() value": {"role": "user", "content": object()},
    "a bytes value": {"role": "user", "content": b"hi"},
    "a tuple value": {"role": "user", "content": ("a", "b")},
    "a non-string key": {"role": "user", "content": "hi", 1: "one"},
    "a non-string nested key": {"role": "user", "content": "hi", "meta": {(1, 2): "pair"}},
    "nested past the JSON encoder's limit": {"role": "user", "content": nested(300)},
    "nested past Python's recursion limit": {"role": "user", "content": nested(100_000)},
    **MESSAGES,
}

VALID = {"role": "user", "content": "fine"}


@pytest.mark.parametrize("message", INVALID.values(), ids=INVALID.keys())
def test_appending_an_invalid_message_raises_invalid_message_error_and_stores_nothing(
    store: TranscriptStore, session: str, message: object
) -> None:
    events = store.events(session)
    with pytest.raises(InvalidMessageError) as raised:
        store.append(session, [VALID, message, dict(VALID)])
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, TranscriptError)
    assert store.events(session) == events


@pytest.mark.parametrize("message", INVALID.values(), ids=INVALID.keys())
def test_syncing_an_invalid_message_raises_invalid_message_error_and_stores_nothing(
    store: TranscriptStore, session: str, message: object
) -> None:
    events = store.events(session)
    with pytest.raises(InvalidMessageError):
        store.sync(session, [VALID, message])
    assert store.events(session) == events


@pytest.mark.parametrize("message", INVALID.values(), ids=INVALID.keys())
def test_after_an_invalid_message_was_refused_the_session_works_normally(
    store: TranscriptStore, session: str, turns, message: object
) -> None:
    # Which exception is checked above; here only what the refusal leaves behind matters.
    with pytest.raises(TranscriptError):
        store.append(session, [message])
    stored = store.append(session, turns(2))
    assert store.active(session) == stored
    versions = [event["version"] for event in store.events(session)]
    assert versions == [1, 2, 3]
    summary = [{"role": "system", "content": "summary"}]
    assert store.compact(session, lambda messages: summary).committed


@pytest.mark.parametrize(
    "messages",
    [{"role": "user", "content": "a lone message, not a list"}, "text", b"bytes", 42, None],
    ids=["a lone message", "a string", "bytes", "a number", "None"],
)
def test_messages_not_given_as_a_list_raise_invalid_message_error(
    store: TranscriptStore, session: str, messages: object
) -> None:
    events = store.events(session)
    with pytest.raises(InvalidMessageError):
        store.append(session, messages)  # type: ignore[arg-type]
    assert store.events(session) == events


def test_messages_may_be_given_as_any_iterable(store: TranscriptStore, session: str, turns) -> None:
    stored = store.append(session, (message for message in turns(3)))
    assert store.active(session) == stored and len(stored) == 3


START_INVALID = {
    "empty id": ("", {}),
    "numeric id": (42, {}),
    "null source": ("s", {"source": None}),
    "numeric model": ("s", {"model": 3}),
    "list parent": ("s", {"parent_id": ["p"]}),
    "text metadata": ("s", {"metadata": "not a mapping"}),
    "NaN metadata": ("s", {"metadata": {"x": float("nan")}}),
    "object metadata": ("s", {"metadata": {"x": object()}}),
    "deeply nested metadata": ("s", {"metadata": {"x": nested(300)}}),
    "a lone surrogate in the id": ("s\udc80", {}),
}


@pytest.mark.parametrize(
    ("session_id", "arguments"), START_INVALID.values(), ids=START_INVALID.keys()
)
def test_starting_a_session_with_invalid_arguments_raises_and_starts_nothing(
    store: TranscriptStore, session_id: object, arguments: dict
) -> None:
    with pytest.raises(TranscriptError):
        store.start(session_id, **arguments)  # type: ignore[arg-type]
    assert store.sessions() == []


@pytest.mark.parametrize(
    "tokens", [{"tokens_before": -1}, {"tokens_after": 1.5}, {"tokens_before": "100"}]
)
def test_invalid_token_counts_raise_and_record_nothing(
    store: TranscriptStore, session: str, turns, tokens: dict
) -> None:
    store.append(session, turns(2))
    attempt = store.begin_compaction(session)
    events = store.events(session)
    with pytest.raises(TranscriptError):
        store.commit_compaction(attempt, [{"role": "system", "content": "s"}], **tokens)
    assert store.events(session) == events
