"""Log entries as the projection takes them, and the segments a batch of them is cut into."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from ..domain.transcript import Transcript


class LogEntry(NamedTuple):  # a tuple: a batch makes one per event, and tuples come cheap
    """One stored event at its log position: decoded, or with the reason it could not be."""

    position: int
    transcript_id: str
    version: int
    topic: str
    event: Transcript.Event | None = None
    undecodable: str | None = None


def segments(entries: Sequence[LogEntry]) -> Iterator[list[LogEntry]]:
    """`entries` cut after each committed compaction: each segment is projected and written
    before the next one is projected, on the views as the one before left them (a
    compaction's change is made by the views, not in the projector's memory)."""
    start = 0
    for index, entry in enumerate(entries):
        if isinstance(entry.event, Transcript.CompactionCommitted):
            yield list(entries[start : index + 1])
            start = index + 1
    if start < len(entries):
        yield list(entries[start:])
