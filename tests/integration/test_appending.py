"""append: ids kept or made, messages round-trip exactly, re-appends are idempotent, a
conflict refuses the whole call, and one call is one transaction."""

from __future__ import annotations

import json
import threading

import orjson
import pytest
from eventsourcing.application import Application

from transcripts import MessageConflictError, TranscriptError, TranscriptStore
from transcripts.application.storage import StoreConfig
from transcripts.domain.messages import content_hash, with_id
from transcripts.domain.transcript import Transcript, transcript_id


def exactly(message: dict) -> str:
    """A message as JSON text, key order and value types included, without its id."""
    return json.dumps({key: value for key, value in message.items() if key != "id"})


ROUND_TRIPS = {
    "string content": {"role": "user", "content": "hello"},
    "list of parts": {
        "role": "user",
        "content": [
            {"type": "text", "text": "look at this"},
            {
                "type": "image_url",
                "image_url": {"url": "data:image/png;base64,iVBORw0K", "detail": "low"},
            },
        ],
    },
    "null content with nested tool calls": {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "search", "arguments": '{"q": "weather", "n": 3}'},
            }
        ],
        "refusal": None,
    },
    "tool result": {"role": "tool", "tool_call_id": "call_1", "name": "search", "content": "sunny"},
    "unicode": {
        "role": "user",
        "content": 'héllo wörld — 日本語 🦜 \u0000 \n\t"quoted"',
        "name": "ünï",
    },
    "unknown keys of every JSON type": {
        "role": "assistant",
        "content": "x",
        "reasoning": {"steps": [1, 2.5, -3, True, False, None], "empty": {}, "none": []},
        "zero_float": 0.0,
        "one_float": 1.0,
        "big": 2**63 - 1,
        "bigger": 2**64 - 1,
        "small": -(2**63),
        "provider_specific": {"cache_control": {"type": "ephemeral"}},
    },
    "legacy function role": {"role": "function", "name": "lookup", "content": "42"},
    "developer role": {"role": "developer", "content": "be brief"},
    "system role": {"role": "system", "content": "you are helpful"},
}


@pytest.mark.parametrize("message", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())
def test_a_message_round_trips_exactly_with_every_key_it_was_given(
    store: TranscriptStore, session: str, message: dict
) -> None:
    [returned] = store.append(session, [message])
    [active] = store.active(session)
    [entry] = store.history(session)
    assert exactly(returned) == exactly(active) == exactly(entry["message"]) == json.dumps(message)
    assert returned["id"] == active["id"] == entry["id"] == entry["message"]["id"]


def test_appended_messages_come_back_in_order_each_with_a_string_id(
    store: TranscriptStore, session: str, turns
) -> None:
    given = turns(5)
    returned = store.append(session, given)
    assert [{k: v for k, v in m.items() if k != "id"} for m in returned] == given
    assert all(isinstance(message["id"], str) and message["id"] for message in returned)
    assert store.active(session) == returned


def test_a_message_given_with_an_id_keeps_it(store: TranscriptStore, session: str) -> None:
    returned = store.append(session, [{"id": "my-own-id", "role": "user", "content": "hi"}])
    assert returned == [{"id": "my-own-id", "role": "user", "content": "hi"}]
    assert store.active(session) == returned


def test_messages_without_an_id_get_new_ids_unique_across_calls(
    store: TranscriptStore, session: str, turns
) -> None:
    first = store.append(session, turns(3))
    second = store.append(session, turns(3))  # the very same contents again
    ids = [message["id"] for message in first + second]
    assert len(set(ids)) == 6
    assert [message["id"] for message in store.active(session)] == ids


def test_the_caller_s_messages_are_not_modified_by_append(
    store: TranscriptStore, session: str
) -> None:
    given = [{"role": "user", "content": "hi"}]
    store.append(session, given)
    assert given == [{"role": "user", "content": "hi"}]


def test_reappending_a_stored_message_is_a_no_op_that_returns_the_stored_message(
    store: TranscriptStore, session: str, turns
) -> None:
    stored = store.append(session, turns(3))
    events = store.events(session)
    assert store.append(session, stored) == stored
    assert store.append(session, [stored[1]]) == [stored[1]]
    assert store.events(session) == events
    assert store.active(session) == stored


def test_a_stored_id_with_its_keys_in_another_order_is_the_same_message(
    store: TranscriptStore, session: str
) -> None:
    [stored] = store.append(session, [{"id": "m1", "role": "user", "content": "hi", "name": "ann"}])
    events = store.events(session)
    again = store.append(session, [{"name": "ann", "content": "hi", "id": "m1", "role": "user"}])
    assert again == [stored]
    assert store.events(session) == events


@pytest.mark.parametrize(
    "edited",
    [
        {"id": "m2", "role": "user", "content": "question 1 (edited)"},
        {"id": "m2", "role": "assistant", "content": "question 1"},
        {"id": "m2", "role": "user", "content": "question 1", "extra": None},
        {"id": "m2", "role": "user"},
    ],
    ids=["content", "role", "an added key", "a removed key"],
)
def test_a_stored_id_with_other_content_raises_a_conflict_and_nothing_of_the_call_is_stored(
    store: TranscriptStore, session: str, edited: dict
) -> None:
    store.append(session, [{"id": "m1", "role": "user", "content": "question 0"}])
    store.append(session, [{"id": "m2", "role": "user", "content": "question 1"}])
    events = store.events(session)
    call = [
        {"role": "user", "content": "new before"},
        {"id": "m3", "role": "assistant", "content": "new with id"},
        edited,
        {"role": "user", "content": "new after"},
    ]
    with pytest.raises(MessageConflictError) as raised:
        store.append(session, call)
    assert isinstance(raised.value, TranscriptError)
    assert "m2" in str(raised.value)
    assert store.events(session) == events
    # m3 was not stored: appending it now stores it, once.
    store.append(session, [{"id": "m3", "role": "assistant", "content": "new with id"}])
    assert [m["id"] for m in store.active(session)] == ["m1", "m2", "m3"]


def test_a_conflict_in_the_third_message_stores_none_of_the_call(
    store: TranscriptStore, session: str
) -> None:
    store.append(session, [{"id": "taken", "role": "user", "content": "original"}])
    events = store.events(session)
    with pytest.raises(MessageConflictError):
        store.append(
            session,
            [
                {"id": "a", "role": "user", "content": "one"},
                {"id": "b", "role": "assistant", "content": "two"},
                {"id": "taken", "role": "user", "content": "three"},
            ],
        )
    assert store.events(session) == events
    assert [entry["id"] for entry in store.history(session)] == ["taken"]


def test_the_same_id_twice_in_one_call_is_stored_once(store: TranscriptStore, session: str) -> None:
    message = {"id": "dup", "role": "user", "content": "hi"}
    returned = store.append(session, [message, dict(message)])
    assert returned == [message, message]
    assert store.active(session) == [message]
    assert [event["type"] for event in store.events(session)] == ["Started", "MessageAppended"]


def test_the_same_id_twice_in_one_call_with_different_contents_raises_a_conflict_and_stores_nothing(
    store: TranscriptStore, session: str
) -> None:
    events = store.events(session)
    with pytest.raises(MessageConflictError):
        store.append(
            session,
            [
                {"id": "ok", "role": "user", "content": "fine"},
                {"id": "dup", "role": "user", "content": "first"},
                {"id": "dup", "role": "user", "content": "second"},
            ],
        )
    assert store.events(session) == events


def test_appending_an_empty_list_stores_nothing(store: TranscriptStore, session: str) -> None:
    events = store.events(session)
    assert store.append(session, []) == []
    assert store.events(session) == events


def test_each_message_is_one_message_appended_event_holding_it_without_its_id_and_a_content_hash(
    store: TranscriptStore, session: str
) -> None:
    store.append(
        session,
        [{"id": "m1", "role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
    )
    appended = [event for event in store.events(session) if event["type"] == "MessageAppended"]
    assert [event["data"]["message"] for event in appended] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    assert appended[0]["data"]["message_id"] == "m1"
    hashes = [event["data"]["content_hash"] for event in appended]
    assert all(isinstance(digest, str) and digest for digest in hashes)
    assert hashes[0] != hashes[1]


def test_the_librarys_own_application_reads_a_stream_appended_to_as_the_store_reads_it(
    durable_url: str,
) -> None:
    """With its own mapper, which would store every event byte for byte as it is stored."""
    messages = [
        {"id": "m1", "role": "user", "content": "héllo \U0001f600", "n": [1.5e-05, -0.0, 2**63]},
        *({"role": "assistant", "content": f"answer {i}"} for i in range(3)),
    ]
    with TranscriptStore.open(durable_url) as store:
        store.start("s")
        stored = store.append("s", messages)
        store.rewind("s", count=1)
        store.append("s", [stored[-1]])  # a restore
        active = store.active("s")
    env = StoreConfig.from_url(durable_url).library_env()
    del env["MAPPER_TOPIC"]  # the library's own
    library = LibraryApplication(env=env)
    try:
        transcript = library.repository.get(transcript_id("s"))
        events = list(library.repository.event_store.get(transcript_id("s")))
        records = library.recorder.select_events(transcript_id("s"))
        assert [library.mapper.to_stored_event(event) for event in events] == records
    finally:
        library.close()
    assert isinstance(transcript, Transcript)
    assert [with_id(i, library_message(transcript, events, i)) for i in transcript.active] == active
    assert transcript.hashes == {m["id"]: content_hash(without_id(m)) for m in stored}


class LibraryApplication(Application):
    """The event-sourcing library's plain application, on the store's log."""

    name = "transcripts"  # the log's tables are named after it


def library_message(transcript: Transcript, events: list, message_id: str) -> dict:
    """The message of an id, as the library decoded the event that appended it."""
    (message,) = {
        orjson.dumps(e.message): e.message
        for e in events
        if isinstance(e, Transcript.MessageAppended) and e.message_id == message_id
    }.values()
    return message


def without_id(message: dict) -> dict:
    return {key: value for key, value in message.items() if key != "id"}


def test_the_same_message_id_may_be_used_in_two_sessions(store: TranscriptStore) -> None:
    store.start("a")
    store.start("b")
    store.append("a", [{"id": "m1", "role": "user", "content": "in a"}])
    store.append("b", [{"id": "m1", "role": "user", "content": "in b"}])
    assert store.active("a") == [{"id": "m1", "role": "user", "content": "in a"}]
    assert store.active("b") == [{"id": "m1", "role": "user", "content": "in b"}]


# -- under contention (a real SQLite file) -----------------------------------------------


def test_an_append_waits_for_a_write_lock_held_by_another_connection(
    sqlite_url: str, hold_write_lock
) -> None:
    with TranscriptStore.open(sqlite_url, lock_timeout=10) as store:
        store.start("s")
        hold_write_lock(0.5)
        stored = store.append("s", [{"role": "user", "content": "after the wait"}])
        assert store.active("s") == stored


def test_an_append_that_cannot_get_the_write_lock_in_time_raises_and_stores_nothing(
    sqlite_url: str, hold_write_lock
) -> None:
    with TranscriptStore.open(sqlite_url, lock_timeout=1) as store:
        store.start("s")
        events = store.events("s")
        hold_write_lock(2.5)
        with pytest.raises(TranscriptError):
            store.append(
                "s", [{"id": f"m{i}", "role": "user", "content": str(i)} for i in range(3)]
            )
    with TranscriptStore.open(sqlite_url) as reopened:
        assert reopened.events("s") == events


def test_batches_appended_by_two_stores_on_one_file_all_land_each_in_one_piece(
    sqlite_url: str,
) -> None:
    batches, size = 15, 3
    with TranscriptStore.open(sqlite_url) as store:
        store.start("s")

    def writer(name: str) -> None:
        with TranscriptStore.open(sqlite_url) as own:
            for batch in range(batches):
                own.append(
                    "s",
                    [
                        {"id": f"{name}-{batch}-{k}", "role": "user", "content": f"{k}"}
                        for k in range(size)
                    ],
                )

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("x", "y")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    with TranscriptStore.open(sqlite_url) as store:
        ids = [entry["id"] for entry in store.history("s")]
        versions = [event["version"] for event in store.events("s")]
    assert sorted(ids) == sorted(
        f"{n}-{b}-{k}" for n in "xy" for b in range(batches) for k in range(size)
    )
    chunks = [ids[i : i + size] for i in range(0, len(ids), size)]
    assert all(len({chunk_id.rsplit("-", 1)[0] for chunk_id in chunk}) == 1 for chunk in chunks)
    assert versions == list(range(1, len(versions) + 1))
