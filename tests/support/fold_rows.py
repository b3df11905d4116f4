"""The rows correct views hold for a session, built from the fold of its events (row
dataclasses, no store): what `compare_session` is given in the unit tests."""

from __future__ import annotations

from transcripts.domain.transcript import transcript_id
from transcripts.projections.fold import SessionFold
from transcripts.projections.rows import ActiveRow, AttemptRow, HistoryRow, SessionRow
from transcripts.projections.views import SessionRows


def rows_of(fold: SessionFold) -> SessionRows:
    """The rows correct views hold for the session the fold describes."""
    active = [
        ActiveRow(fold.session_id, position, message["id"], message["role"], message)
        for position, message in enumerate(fold.active(), 1)
    ]
    history = [
        HistoryRow(
            fold.session_id,
            seq,
            entry.id,
            entry.message["role"],
            {"id": entry.id, **entry.message},
            entry.active,
            entry.superseded_by,
            entry.added_by,
            entry.appended_at,
            entry.appended_version,
            entry.rewound_version,
            entry.restored_version,
        )  # fmt: skip
        for seq, entry in enumerate(fold.entries.values(), 1)
    ]
    attempts = [
        AttemptRow(
            entry["id"],
            fold.session_id,
            entry["version"],
            entry["status"],
            entry["reason"],
            entry["failure"],
            entry["error"],
            entry["based_on_version"],
            entry["superseded"],
            entry["added"],
            len(entry["superseded"]),
            len(entry["added"]),
            entry["tokens_before"],
            entry["tokens_after"],
            entry["at"],
        )  # fmt: skip
        for entry in fold.compactions
    ]
    assert fold.started_at is not None and fold.last_event_at is not None
    session = SessionRow(
        fold.session_id, transcript_id(fold.session_id).hex, fold.source, fold.model,
        fold.parent_id, fold.metadata, fold.started_at, fold.last_event_at, fold.version,
        len(fold.entries), len(fold.active_ids),
        sum(entry["status"] == "committed" for entry in fold.compactions),
        sum(entry["status"] == "failed" for entry in fold.compactions),
        rewound_count=sum(e.rewound_version is not None for e in fold.entries.values()),
        context_version=fold.context_version,
    )  # fmt: skip
    return SessionRows(session, active, history, attempts)
