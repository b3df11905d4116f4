"""Transcript events without a store, for the unit tests: a started transcript, the events its
commands triggered, their replay, and the log entries the projector reads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from transcripts.domain.transcript import Transcript
from transcripts.projections.projector import LogEntry


def start(
    session_id: str = "s",
    *,
    source: str = "api",
    model: str | None = None,
    parent_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Transcript:
    """A new transcript; its Started event is pending (see `collect`)."""
    return Transcript.start(
        session_id, source=source, model=model, parent_id=parent_id, metadata=metadata or {}
    )


def collect(transcript: Transcript) -> list[Transcript.Event]:
    """The events the transcript's commands triggered since the last collect."""
    return list(transcript.collect_events())  # type: ignore[arg-type]


def replay(events: Iterable[Transcript.Event]) -> Transcript:
    """The transcript the events make, as the write side loads it."""
    transcript: Any = None
    for event in events:
        transcript = event.mutate(transcript)
    assert isinstance(transcript, Transcript)
    return transcript


def commit(transcript: Transcript, replacement: list, **fields: Any) -> None:
    """Commit a compaction of the whole active list (an attempt begun just now)."""
    transcript.commit_compaction(
        **{
            "compaction_id": "cmp-1",
            "based_on_version": transcript.version,
            "snapshot": list(transcript.active),
            "replacement": replacement,
            "reason": "",
            "tokens_before": None,
            "tokens_after": None,
            **fields,
        }
    )


def entries(events: Iterable[Transcript.Event], first: int = 1) -> list[LogEntry]:
    """The events as log entries at positions `first`, `first + 1`, …"""
    return [
        LogEntry(
            position=first + offset,
            transcript_id=event.originator_id.hex,
            version=event.originator_version,
            topic=type(event).TOPIC,
            event=event,
        )
        for offset, event in enumerate(events)
    ]
