"""An unknown session id, answered with the closest ids the store holds."""

from __future__ import annotations

import difflib

from ... import SessionNotFoundError, TranscriptError, TranscriptStore

CLOSEST = 3  # ids suggested at most


def with_suggestions(store: TranscriptStore, error: SessionNotFoundError) -> TranscriptError:
    """`error`, naming the store's closest session ids (difflib's ratio), if any is close."""
    ids = [session["id"] for session in store.sessions()]
    closest = difflib.get_close_matches(error.session_id, ids, n=CLOSEST, cutoff=0.6)
    if not closest:
        return error
    return TranscriptError(f"{error}; did you mean {', '.join(map(repr, closest))}?")
