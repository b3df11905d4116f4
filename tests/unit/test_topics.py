"""Stored event topics are part of the data format: they never change with the code."""

from __future__ import annotations

from eventsourcing.utils import get_topic, resolve_topic

from transcripts.domain.transcript import Transcript

STORED_TOPICS = {
    Transcript: "transcripts:Transcript",
    Transcript.Started: "transcripts:Transcript.Started",
    Transcript.MessageAppended: "transcripts:Transcript.MessageAppended",
    Transcript.CompactionCommitted: "transcripts:Transcript.CompactionCommitted",
    Transcript.CompactionFailed: "transcripts:Transcript.CompactionFailed",
    Transcript.Rewound: "transcripts:Transcript.Rewound",
    Transcript.StateChanged: "transcripts:Transcript.StateChanged",
    Transcript.Erased: "transcripts:Transcript.Erased",
}


def test_every_event_class_has_its_explicit_stored_topic() -> None:
    assert {cls: get_topic(cls) for cls in STORED_TOPICS} == STORED_TOPICS


def test_stored_topics_resolve_back_to_the_classes() -> None:
    assert all(resolve_topic(topic) is cls for cls, topic in STORED_TOPICS.items())


def test_event_type_names_are_the_documented_ones() -> None:
    names = {cls.__name__ for cls in STORED_TOPICS} - {"Transcript"}
    assert names == {
        "Started",
        "MessageAppended",
        "CompactionCommitted",
        "CompactionFailed",
        "Rewound",
        "StateChanged",
        "Erased",
    }
