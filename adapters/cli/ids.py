"""Ids given on the command line: a unique start of a message or attempt id will do
(`msg_3f2a` for `msg_3f2a…`, as the tables shorten them)."""

from __future__ import annotations

from ... import CompactionNotFoundError, MessageNotFoundError, TranscriptError, TranscriptStore


def unique_attempt_id(store: TranscriptStore, session_id: str, start: str) -> str:
    """The one compaction attempt id of the session beginning with `start`."""
    start = start.removesuffix("…")
    matches = [a["id"] for a in store.compactions(session_id) if a["id"].startswith(start)]
    if len(matches) == 1 and start:
        return str(matches[0])
    if not matches or not start:
        raise CompactionNotFoundError(session_id, start)
    raise TranscriptError(
        f"{start!r} is the start of {len(matches)} compaction attempt ids of session "
        f"{session_id!r}: give more of it"
    )


def unique_message_id(store: TranscriptStore, session_id: str, start: str) -> str:
    """The one message id of the session beginning with `start` (a shortened id)."""
    start = start.removesuffix("…")
    matches = [entry["id"] for entry in store.history(session_id) if entry["id"].startswith(start)]
    if len(matches) == 1 and start:
        return str(matches[0])
    if not matches or not start:
        raise MessageNotFoundError(session_id, start)
    raise TranscriptError(
        f"{start!r} is the start of {len(matches)} message ids of session {session_id!r}: "
        "give more of it"
    )
