"""The event log of a store file, read and written by the event-sourcing library alone: the
events of a session and their fold, and a writer that stores events no view has seen.

The fold (`SessionFold`) shares no code with the projector, so what it says the views and
queries must be is an independent check of them.
"""

from __future__ import annotations

from typing import Any

from transcripts.application.event_log import TranscriptLog
from transcripts.application.storage import StoreConfig
from transcripts.domain.transcript import Transcript, transcript_id
from transcripts.projections.fold import SessionFold


def bare_log(url: str) -> TranscriptLog:
    """The write side of a store, without its views: events written with it are stored like
    the store's, and no view sees them until a store catches up (its next query,
    `catch_up_projections`, or its next open)."""
    return TranscriptLog(StoreConfig.from_url(url))


def log_events(url: str, session_id: str) -> list[Transcript.Event]:
    """The events of a session, read from the file by the library alone."""
    log = bare_log(url)
    try:
        return list(log.events.get(transcript_id(session_id)))  # type: ignore[arg-type]
    finally:
        log.close()


def fold_of(url: str, session_id: str) -> SessionFold:
    return SessionFold.of(log_events(url, session_id))


def expected_summary(fold: SessionFold) -> dict[str, Any]:
    """The `sessions()` entry a session's events call for."""
    return {
        "id": fold.session_id,
        "source": fold.source,
        "model": fold.model,
        "parent_id": fold.parent_id,
        "metadata": fold.metadata,
        "started_at": fold.started_at,
        "last_event_at": fold.last_event_at,
        "version": fold.version,
        "messages": len(fold.entries),
        "active": len(fold.active_ids),
        "compactions_committed": sum(entry["status"] == "committed" for entry in fold.compactions),
        "compactions_failed": sum(entry["status"] == "failed" for entry in fold.compactions),
        "quarantined": 0,
        "erased_at": fold.erased_at,
        "rewound": sum(entry.rewound_version is not None for entry in fold.entries.values()),
        "state": fold.state,
    }


def write_behind_the_views(
    url: str,
    sessions: int,
    messages: int,
    *,
    compact_every: int = 0,
    prefix: str = "bulk",
) -> list[str]:
    """Store `sessions` new sessions of `messages` messages each (and a committed compaction
    every `compact_every` messages) with the library's own recorder, in one transaction:
    the views of the file do not see them until a store catches up. Return the session ids."""
    log = bare_log(url)
    try:
        transcripts = []
        for k in range(sessions):
            transcript = Transcript.start(
                f"{prefix}-{k}", source="bulk", model=None, parent_id=None, metadata={"k": k}
            )
            for i in range(messages):
                role = ("user", "assistant")[i % 2]
                transcript.append(
                    [{"id": f"{prefix}-{k}-{i}", "role": role, "content": f"message {i}"}]
                )
                if compact_every and (i + 1) % compact_every == 0:
                    snapshot = list(transcript.active)
                    transcript.commit_compaction(
                        compaction_id=f"cmp-{prefix}-{k}-{i}",
                        based_on_version=transcript.version,
                        snapshot=snapshot,
                        replacement=[{"role": "system", "content": f"summary up to {i}"}],
                        reason="bulk",
                        tokens_before=None,
                        tokens_after=None,
                    )
            transcripts.append(transcript)
        log.save(*transcripts)
        return [transcript.session_id for transcript in transcripts]
    finally:
        log.close()


class WriterBehindTheViews:
    """A writer without the views (as an older release, or a process of another program on
    the log, writes): its events are stored, and no view sees them until a store catches
    up (a query of a session it wrote, `catch_up_projections`, a follower, an open)."""

    def __init__(self, url: str) -> None:
        self._log = bare_log(url)

    def __enter__(self) -> WriterBehindTheViews:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._log.close()

    def start(self, session_id: str) -> None:
        self._log.start(session_id, source="api", model=None, parent_id=None, metadata={})

    def append(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        self._log.write(session_id, lambda transcript: transcript.append(messages))


def append_behind_the_views(url: str, session_id: str, messages: list[dict[str, Any]]) -> None:
    """Append to a session as a writer without the views does (`WriterBehindTheViews`)."""
    with WriterBehindTheViews(url) as writer:
        writer.append(session_id, messages)
