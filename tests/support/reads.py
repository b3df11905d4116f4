"""What a reader can see of a store through the public queries, to compare before and after;
`snapshot` adds the log as stored (support/rows.py), to check that a refused call changed
nothing."""

from __future__ import annotations

from typing import Any

from transcripts import TranscriptStore

from .rows import log_rows


def seen(store: TranscriptStore, session_id: str) -> dict[str, Any]:
    """Everything a reader can see of one session: active list, history, audit, events."""
    return {
        "active": store.active(session_id),
        "history": store.history(session_id),
        "compactions": store.compactions(session_id),
        "events": store.events(session_id),
    }


def everything(store: TranscriptStore) -> dict[str, Any]:
    """Everything a reader can see of a store: the sessions, and what each one holds (of an
    erased session, when it was erased: its content cannot be read)."""
    sessions = store.sessions()
    return {
        "sessions": sessions,
        **{
            session["id"]: {"erased_at": session["erased_at"]}
            if session["erased_at"]
            else seen(store, session["id"])
            for session in sessions
        },
    }


def snapshot(store: TranscriptStore, url: str) -> dict[str, Any]:
    """Everything a reader can see of the store at `url` and, unless it is in memory, its log
    as stored."""
    return {"seen": everything(store), "log": None if url == "memory://" else log_rows(url)}
