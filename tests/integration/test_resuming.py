"""A store opened afresh writes to a session without replaying its history: it resumes the
transcript from its start and looks up the ids it is given in the views. Whatever it did
not replay, every write decides as a store that had replayed the whole session would:
stored ids are no-ops (active, superseded, rewound, summaries), changed contents conflict,
a rewound id is restored by `append` and not by `sync`, and every other command (a
compaction, a rewind, `forget`) works on the whole transcript. Other writers' changes after
it resumed count too. Run on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from support.json_messages import messages
from support.messages import summary, turns
from support.rows import damage_event, log_rows
from transcripts import (
    InvalidMessageError,
    MessageConflictError,
    SessionErasedError,
    StorageError,
    TranscriptStore,
)
from transcripts.config import new_cipher_key

SESSION = "long"


def written(url: str, **options: Any) -> dict[str, Any]:
    """A session with every kind of stored message: active, superseded by a compaction,
    its summary, rewound; returns the ids of each kind."""
    with TranscriptStore.open(url, **options) as store:
        store.start(SESSION, source="test")
        stored = store.append(SESSION, turns(8))
        result = store.compact(SESSION, lambda live: [summary(), *live[-2:]], reason="budget")
        assert result.committed
        later = store.append(SESSION, turns(3, prefix="later"))
        rewound = store.rewind(SESSION, count=2, reason="undo")
        return {
            "superseded": stored[:6],
            "summary": result.messages[:1],
            "active": store.active(SESSION),
            "rewound": rewound,
            "all": [entry["message"] for entry in store.history(SESSION)],
            "later": later,
        }


@pytest.fixture
def session(durable_url: str) -> dict[str, Any]:
    return written(durable_url)


@pytest.fixture
def reopened(durable_url: str, session: dict[str, Any]) -> Iterator[TranscriptStore]:
    with TranscriptStore.open(durable_url) as store:
        yield store


def changed(message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "content": f"{message.get('content')} (changed)"}


def test_a_reopened_store_skips_every_stored_id_whatever_became_of_it(
    reopened: TranscriptStore, session: dict[str, Any]
) -> None:
    events = reopened.events(SESSION)
    active = reopened.active(SESSION)
    assert reopened.sync(SESSION, session["all"]) == active
    assert reopened.events(SESSION) == events


@pytest.mark.parametrize("kind", ["superseded", "summary", "active", "rewound"])
def test_a_reopened_store_refuses_a_stored_id_with_other_content_and_stores_nothing(
    reopened: TranscriptStore, session: dict[str, Any], kind: str
) -> None:
    events = reopened.events(SESSION)
    with pytest.raises(MessageConflictError):
        reopened.append(SESSION, [{"role": "user", "content": "new"}, changed(session[kind][0])])
    assert reopened.events(SESSION) == events


def test_a_reopened_store_restores_a_rewound_message_on_append_but_not_on_sync(
    reopened: TranscriptStore, session: dict[str, Any]
) -> None:
    first, second = session["rewound"]
    assert reopened.sync(SESSION, [first]) == session["active"]
    assert reopened.append(SESSION, [second]) == [second]
    assert reopened.active(SESSION) == [*session["active"], second]
    assert [entry["id"] for entry in reopened.history(SESSION) if entry["rewound"]] == [first["id"]]


def test_a_reopened_store_compacts_rewinds_and_forgets_on_the_whole_transcript(
    reopened: TranscriptStore, session: dict[str, Any]
) -> None:
    reopened.append(SESSION, turns(2, prefix="new"))  # resumed, then asked for more
    result = reopened.compact(SESSION, lambda live: [summary("again"), live[-1]])
    assert result.committed
    assert [m["content"] for m in reopened.active(SESSION)] == ["again", "new 1"]
    assert reopened.rewind(SESSION, count=1) == [result.messages[-1]]
    reopened.forget(SESSION)
    with pytest.raises(SessionErasedError):
        reopened.append(SESSION, turns(1))


def test_a_reopened_store_counts_what_another_store_wrote_and_rewound_after_it_resumed(
    durable_url: str, reopened: TranscriptStore, session: dict[str, Any]
) -> None:
    reopened.append(SESSION, turns(1, prefix="resumed"))
    with TranscriptStore.open(durable_url) as other:
        theirs = other.append(SESSION, turns(2, prefix="theirs"))
        (undone,) = other.rewind(SESSION, count=1)
    assert undone == theirs[-1]
    with pytest.raises(MessageConflictError):
        reopened.append(SESSION, [changed(theirs[0])])
    assert reopened.sync(SESSION, theirs) == reopened.active(SESSION)
    assert reopened.append(SESSION, [undone])[-1] == undone
    assert reopened.active(SESSION)[-2:] == theirs


def test_a_reopened_store_appends_and_compacts_after_another_store_compacted_the_session(
    durable_url: str, reopened: TranscriptStore
) -> None:
    reopened.append(SESSION, turns(1, prefix="resumed"))
    with TranscriptStore.open(durable_url) as other:
        assert other.compact(SESSION, lambda live: [summary("theirs"), live[-1]]).committed
    (mine,) = reopened.append(SESSION, turns(1, prefix="mine"))
    assert [m["content"] for m in reopened.active(SESSION)] == ["theirs", "resumed 0", "mine 0"]
    assert reopened.compact(SESSION, lambda live: [summary("mine"), mine]).committed
    assert reopened.active(SESSION) == [reopened.active(SESSION)[0], mine]


def test_a_reopened_encrypted_store_knows_its_stored_ids_from_their_encrypted_rows(
    durable_url: str,
) -> None:
    key = new_cipher_key()
    session = written(durable_url, cipher_key=key)
    with TranscriptStore.open(durable_url, cipher_key=key) as reopened:
        events = reopened.events(SESSION)
        reopened.sync(SESSION, session["all"])
        assert reopened.events(SESSION) == events
        with pytest.raises(MessageConflictError):
            reopened.append(SESSION, [changed(session["superseded"][0])])


_sessions = itertools.count()


def test_a_message_of_any_json_shape_is_known_by_its_content_after_reopening(
    durable_url: str,
) -> None:
    with TranscriptStore.open(durable_url) as writer, TranscriptStore.open(durable_url) as fresh:

        @settings(
            max_examples=40,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(message=messages())
        def run(message: dict[str, Any]) -> None:
            session_id = f"shape-{next(_sessions)}"
            writer.start(session_id)
            try:
                (stored,) = writer.append(session_id, [message])
            except InvalidMessageError:
                return
            events = fresh.events(session_id)
            assert fresh.sync(session_id, [stored]) == [stored]  # `fresh` never saw it
            assert fresh.events(session_id) == events
            with pytest.raises(MessageConflictError):
                fresh.append(session_id, [{**stored, "changed-by-test": True}])

        run()


def test_a_resumed_store_replays_once_a_rebuild_left_out_an_event_it_had_not_read(
    sqlite_url: str,
) -> None:
    """The views a resumed transcript relies on can lose a message (a rebuild quarantining a
    damaged event): the store then replays the session rather than take the id for new."""
    with TranscriptStore.open(sqlite_url) as store:
        store.start(SESSION)
        x, _ = store.append(SESSION, [{"id": "x", "role": "user", "content": "x"}, *turns(1)])
    with TranscriptStore.open(sqlite_url) as writer:
        writer.append(SESSION, turns(1, prefix="resumed"))
        damage_event(sqlite_url, SESSION, 2, state=lambda _state: b"not json")  # x's
        with TranscriptStore.open(sqlite_url) as other:
            other.rebuild_projections()  # x is left out of the views now
        rows = log_rows(sqlite_url)
        with pytest.raises(StorageError, match="a stored event is corrupt"):
            writer.append(SESSION, [x])  # never a second MessageAppended of x
        assert log_rows(sqlite_url) == rows
