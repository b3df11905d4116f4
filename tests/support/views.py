"""The stored views in memory, as far as the projector reads them: the port it loads sessions,
active lists and rewind marks through (`ViewState`), and `write`, which stores a segment's
changes as the SQL views do (and keeps which messages a compaction superseded). Not a mock
of the projector: the unit tests run the real one against it."""

from __future__ import annotations

import dataclasses

from transcripts.projections.projector import ViewState
from transcripts.projections.rows import ActiveRow, SessionRow, Supersession, ViewChanges


class MemoryViews(ViewState):
    def __init__(self) -> None:
        self.sessions: dict[str, SessionRow] = {}  # by transcript id
        self.active: dict[str, list[ActiveRow]] = {}  # by session id, in position order
        self.rewound: dict[tuple[str, str], int | None] = {}  # by (session id, message id)
        self.loaded: list[tuple[str, str]] = []  # ("session" | "active" | "rewound", key)
        self.superseded: dict[tuple[str, str], str] = {}  # compaction id by (session, message)

    def load_session(self, transcript_id: str) -> SessionRow | None:
        self.loaded.append(("session", transcript_id))
        row = self.sessions.get(transcript_id)
        return dataclasses.replace(row) if row is not None else None  # a copy, as read

    def load_active(self, session_id: str) -> list[ActiveRow]:
        self.loaded.append(("active", session_id))
        return list(self.active.get(session_id, []))

    def load_rewound(self, session_id: str, message_id: str) -> int | None:
        self.loaded.append(("rewound", message_id))
        return self.rewound.get((session_id, message_id))

    def write(self, changes: ViewChanges) -> None:
        for transcript_id in changes.erased:  # first: the batch holds no other row of theirs
            session_id = changes.sessions[transcript_id].session_id
            self.active.pop(session_id, None)
            self.rewound = {key: is_ for key, is_ in self.rewound.items() if key[0] != session_id}
        for key, row in changes.history_inserts.items():
            self.rewound[key] = row.rewound_version
        for key, mark in changes.marks.items():
            self.rewound[key] = mark.rewound_version
        for transcript_id, row in changes.sessions.items():
            self.sessions[transcript_id] = dataclasses.replace(row)
        for active in changes.active_appends:
            self.active.setdefault(active.session_id, []).append(active)
        for session_id, rows in changes.active_rewrites.items():
            self.active[session_id] = list(rows)
        if changes.supersession is not None:
            self._supersede(changes.supersession)

    def _supersede(self, change: Supersession) -> None:
        rows = self.active.get(change.session_id, [])
        head, rest = rows[: change.replaced], rows[change.replaced :]
        kept = dict(change.kept)
        for row in head:
            if row.message_id not in kept:
                self.superseded[(row.session_id, row.message_id)] = change.compaction_id
        moved = [
            *(
                dataclasses.replace(r, position=kept[r.message_id])
                for r in head
                if r.message_id in kept
            ),
            *change.added,
            *(
                dataclasses.replace(r, position=r.position + change.length - change.replaced)
                for r in rest
            ),
        ]
        self.active[change.session_id] = sorted(moved, key=lambda row: row.position)
        for session in self.sessions.values():  # as the views move it
            if session.session_id == change.session_id:
                session.position_base = change.next_base
