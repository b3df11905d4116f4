"""Time travel: the raw event log and the active list as it was right after any event."""

from __future__ import annotations

from datetime import datetime

import pytest

from transcripts import TranscriptError, TranscriptStore

EVENT_TYPES = {"Started", "MessageAppended", "CompactionCommitted", "CompactionFailed"}


@pytest.fixture
def timeline(store: TranscriptStore, session: str, turns) -> dict[int, list[dict]]:
    """Drive a session through every kind of event; map each version to the active list then."""
    seen: dict[int, list[dict]] = {}

    def note() -> None:
        seen[store.events(session)[-1]["version"]] = store.active(session)

    note()
    for message in turns(4):
        store.append(session, [message])
        note()
    store.compact(session, lambda messages: 1 / 0)
    note()
    store.compact(
        session, lambda messages: [{"role": "system", "content": "summary"}, messages[-1]]
    )
    note()
    store.append(session, turns(2, prefix="after"))
    note()
    return seen


def test_active_at_gives_the_active_list_right_after_each_event(
    store: TranscriptStore, session: str, timeline: dict[int, list[dict]]
) -> None:
    for version, active in timeline.items():
        assert store.active_at(session, version) == active, f"version {version}"


def test_active_at_before_and_after_a_compaction(
    store: TranscriptStore, session: str, timeline: dict[int, list[dict]]
) -> None:
    commit = next(e["version"] for e in store.events(session) if e["type"] == "CompactionCommitted")
    before, after = store.active_at(session, commit - 1), store.active_at(session, commit)
    assert len(before) == 4 and before == timeline[commit - 1]
    assert [m["content"] for m in after] == ["summary", before[-1]["content"]]
    assert after[1] == before[-1]
    assert store.active_at(session, 1) == []


def test_a_failed_compaction_leaves_the_active_list_as_it_was(
    store: TranscriptStore, session: str, timeline: dict[int, list[dict]]
) -> None:
    failed = next(e["version"] for e in store.events(session) if e["type"] == "CompactionFailed")
    assert store.active_at(session, failed) == store.active_at(session, failed - 1)


@pytest.mark.parametrize("version", [0, -1, 1.5, "2", None])
def test_active_at_refuses_a_version_that_is_not_a_positive_integer(
    store: TranscriptStore, session: str, version: object
) -> None:
    with pytest.raises(TranscriptError):
        store.active_at(session, version)  # type: ignore[arg-type]


def test_events_are_numbered_from_1_and_typed_with_exactly_the_four_event_names(
    store: TranscriptStore, session: str, timeline: dict[int, list[dict]]
) -> None:
    events = store.events(session)
    assert [event["version"] for event in events] == list(range(1, len(events) + 1))
    assert [event["type"] for event in events] == [
        "Started",
        *["MessageAppended"] * 4,
        "CompactionFailed",
        "CompactionCommitted",
        *["MessageAppended"] * 2,
    ]
    assert {event["type"] for event in events} == EVENT_TYPES
    for event in events:
        assert set(event) >= {"version", "type", "at", "data"}
        assert isinstance(event["at"], datetime)
        assert isinstance(event["data"], dict)
    stamps = [event["at"] for event in events]
    assert stamps == sorted(stamps)


def test_the_started_event_carries_the_session_s_arguments(store: TranscriptStore) -> None:
    store.start(
        "child", source="cli", model="gpt-x", parent_id="parent", metadata={"cwd": "/tmp", "n": 1}
    )
    [started] = store.events("child")
    assert started["type"] == "Started"
    assert {
        k: started["data"][k] for k in ("session_id", "source", "model", "parent_id", "metadata")
    } == {
        "session_id": "child",
        "source": "cli",
        "model": "gpt-x",
        "parent_id": "parent",
        "metadata": {"cwd": "/tmp", "n": 1},
    }


def test_the_compaction_failed_event_carries_what_the_audit_shows(
    store: TranscriptStore, session: str, timeline: dict[int, list[dict]]
) -> None:
    failed = next(e for e in store.events(session) if e["type"] == "CompactionFailed")
    audit = next(entry for entry in store.compactions(session) if entry["status"] == "failed")
    assert failed["data"]["compaction_id"] == audit["id"]
    assert failed["data"]["failure"] == audit["failure"] == "summarize_error"
    assert failed["data"]["error"] == audit["error"]
    assert "division by zero" in audit["error"]
    assert failed["data"]["based_on_version"] == audit["based_on_version"] == 5
    assert failed["at"] == audit["at"]
