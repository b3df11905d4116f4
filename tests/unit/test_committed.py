"""`CompactionCommitted` version 2 names what it supersedes by a count; version 1, which
listed the ids, is upcast as it is read (`domain/committed.py`)."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import uuid4

import orjson
import pytest
from eventsourcing.persistence import Mapper, StoredEvent

from support.events import collect, commit, replay, start
from support.messages import TRIP, summary
from transcripts.adapters.storage.codec import OrjsonTranscoder
from transcripts.domain.committed import superseded_ids, upcast_v1_v2
from transcripts.domain.transcript import Transcript

AT = {"_type_": "datetime_iso", "_data_": "2026-03-01T12:30:15.123456+00:00"}


def version_1_state(**changes: object) -> dict[str, object]:
    """A commit's stored state as the release before version 2 wrote it."""
    return {
        "timestamp": AT,
        "compaction_id": "cmp-1",
        "based_on_version": 7,
        "superseded": ["m2", "m3", "m4", "m5"],
        "kept": ["m6", "m1"],
        "added": [{"id": "s1", "message": summary(), "content_hash": "ab" * 32}],
        "order": ["m6", "s1", "m1"],
        "reason": "budget",
        "tokens_before": 9,
        "tokens_after": None,
        **changes,
    }


def test_the_upcaster_turns_the_superseded_ids_into_the_count_of_messages_replaced() -> None:
    state = version_1_state()
    upcast_v1_v2(state)
    assert state["replaced"] == 6 and "superseded" not in state
    assert (state["kept"], state["order"]) == (["m6", "m1"], ["m6", "s1", "m1"])


def test_a_stored_version_1_commit_decodes_as_version_3_and_a_new_one_is_stored_as_version_3() -> (
    None
):
    mapper: Mapper = Mapper(transcoder=OrjsonTranscoder())
    stored = StoredEvent(
        originator_id=uuid4(),
        originator_version=8,
        topic=Transcript.CompactionCommitted.TOPIC,
        state=orjson.dumps(version_1_state()),
    )
    event = mapper.to_domain_event(stored)
    assert isinstance(event, Transcript.CompactionCommitted)
    assert (event.replaced, event.kept, event.reason) == (6, ["m6", "m1"], "budget")
    assert event.timestamp == datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=UTC)
    again = orjson.loads(mapper.to_stored_event(event).state)
    assert (again["class_version"], again["replaced"], "superseded" in again) == (3, 6, False)
    assert event.metadata is None and again["metadata"] is None
    assert mapper.to_domain_event(mapper.to_stored_event(event)).replaced == 6


def test_a_version_1_commit_without_its_superseded_ids_does_not_decode() -> None:
    state = version_1_state()
    del state["superseded"]
    with pytest.raises(KeyError):
        upcast_v1_v2(state)


def test_a_commit_applies_to_the_transcript_as_the_one_that_listed_its_ids() -> None:
    transcript = start("trip", source="cli", model=None)
    transcript.append(TRIP)
    transcript.append([{"id": "late", "role": "user", "content": "meanwhile"}])
    commit(transcript, [TRIP[5], summary(), TRIP[0]], snapshot=[m["id"] for m in TRIP])
    events = collect(transcript)
    event = events[-1]
    assert event.replaced == 6 and transcript.active == [*event.order, "late"]
    assert replay(events).active == transcript.active
    assert superseded_ids([m["id"] for m in TRIP], event.replaced, event.kept) == [
        "m2",
        "m3",
        "m4",
        "m5",
    ]
    assert transcript.calls == {} and transcript.answers == {}  # m4 and m5 are gone


@pytest.mark.parametrize(
    ("active", "replaced", "kept", "problem"),
    [
        (["m1", "m2"], 3, [], "it replaces 3 messages, 2 are active"),
        (["m1", "m2", "m3"], 2, ["m3"], r"keeps messages it does not replace: \['m3'\]"),
    ],
)
def test_a_commit_of_messages_that_are_not_active_names_what_is_wrong(
    active: list[str], replaced: int, kept: list[str], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        superseded_ids(active, replaced, kept)
