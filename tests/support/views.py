"""The stored views in memory, as far as the projector reads them: the port it loads sessions
and active lists through (`ViewState`), and `write`, which stores a batch's changes as the SQL
views do. Not a mock of the projector: the unit tests run the real one against it."""

from __future__ import annotations

import dataclasses

from transcripts.projections.projector import ViewState
from transcripts.projections.rows import ActiveRow, SessionRow, ViewChanges


class MemoryViews(ViewState):
    def __init__(self) -> None:
        self.sessions: dict[str, SessionRow] = {}  # by transcript id
        self.active: dict[str, list[ActiveRow]] = {}  # by session id, in position order
        self.loaded: list[tuple[str, str]] = []  # ("session" | "active", key), in call order

    def load_session(self, transcript_id: str) -> SessionRow | None:
        self.loaded.append(("session", transcript_id))
        row = self.sessions.get(transcript_id)
        return dataclasses.replace(row) if row is not None else None  # a copy, as read

    def load_active(self, session_id: str) -> list[ActiveRow]:
        self.loaded.append(("active", session_id))
        return list(self.active.get(session_id, []))

    def write(self, changes: ViewChanges) -> None:
        for transcript_id in changes.erased:  # first: the batch holds no other row of theirs
            self.active.pop(changes.sessions[transcript_id].session_id, None)
        for transcript_id, row in changes.sessions.items():
            self.sessions[transcript_id] = dataclasses.replace(row)
        for active in changes.active_appends:
            self.active.setdefault(active.session_id, []).append(active)
        for session_id, rows in changes.active_rewrites.items():
            self.active[session_id] = list(rows)
