"""Helpers of the read-model tests: the raw rows of the view tables, the events of the log
read without the views, and a writer that stores events the views do not see.

Everything here reads or writes the real SQLite file of a store with plain sqlite3 or with
the event-sourcing library's own recorder, so the checks share no code with the projection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from transcripts import TranscriptStore
from transcripts.application.event_log import TranscriptLog
from transcripts.application.storage import StoreConfig
from transcripts.domain.transcript import Transcript, transcript_id
from transcripts.projections.fold import SessionFold

VIEW_TABLES = ("active_messages", "message_history", "compaction_attempts", "sessions")
# Every table a projection writes, with the key that orders its rows.
ORDERED_TABLES = {
    "active_messages": "session_id, position",
    "message_history": "session_id, seq",
    "compaction_attempts": "compaction_id",
    "sessions": "session_id",
    "quarantined_events": "position",
    "view_versions": "view",
}


def path_of(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


@contextmanager
def connect(url: str) -> Iterator[sqlite3.Connection]:
    """A plain sqlite3 connection to a store file, committed on success."""
    with closing(sqlite3.connect(path_of(url), timeout=30)) as connection:
        with connection:
            yield connection


def raw_rows(url: str) -> dict[str, list[tuple]]:
    """Every row of every view table, and the tracked position, as sqlite3 returns them."""
    with connect(url) as db:
        rows = {
            table: db.execute(f"SELECT * FROM {table} ORDER BY {key}").fetchall()
            for table, key in ORDERED_TABLES.items()
        }
        rows["tracking"] = db.execute(
            "SELECT * FROM tracking WHERE application_name = 'transcripts'"
        ).fetchall()
    return rows


def row_counts(url: str) -> dict[str, int]:
    with connect(url) as db:
        return {
            table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ORDERED_TABLES
        }


def head(url: str) -> int:
    """The last log position (the notification id of the newest stored event)."""
    with connect(url) as db:
        return db.execute("SELECT MAX(rowid) FROM stored_events").fetchone()[0] or 0


def tracked(url: str) -> int:
    """The log position the live views reflect."""
    with connect(url) as db:
        row = db.execute(
            "SELECT notification_id FROM tracking WHERE application_name = 'transcripts'"
        ).fetchone()
    return row[0] if row else 0


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
    }


def reads(store: TranscriptStore) -> dict[str, Any]:
    """Everything the public queries return, for every session (of an erased one: when)."""
    sessions = store.sessions()
    return {
        "sessions": sessions,
        **{
            session["id"]: {"erased_at": session["erased_at"]}
            if session["erased_at"]
            else {
                "active": store.active(session["id"]),
                "history": store.history(session["id"]),
                "compactions": store.compactions(session["id"]),
            }
            for session in sessions
        },
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
