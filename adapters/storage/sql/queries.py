"""The queries users' calls make of the live view tables, in one read transaction each.

Each takes a cursor of a transaction on views that reflect the whole log (the views open
it). A query of an unknown session answers None, where the store tells "never started"
from "started, and empty".
"""

from __future__ import annotations

from ....domain.messages import Message
from ....projections.rows import AttemptRow, HistoryRow, QuarantineRow, SessionRow
from ....projections.views import SessionRows
from .dialect import Cursor
from .rows import RowReader
from .schema import QUARANTINE

ACTIVE = "SELECT message FROM active_messages WHERE session_id = ? ORDER BY position"
ACTIVE_ROWS = "SELECT * FROM active_messages WHERE session_id = ? ORDER BY position"
HISTORY = "SELECT * FROM message_history WHERE session_id = ? ORDER BY seq"
ATTEMPTS = "SELECT * FROM compaction_attempts WHERE session_id = ? ORDER BY version"
SESSION = "SELECT * FROM sessions WHERE session_id = ?"
EXISTS = "SELECT 1 AS found FROM sessions WHERE session_id = ?"


class ViewQueries:
    def __init__(self, rows: RowReader) -> None:
        self.rows = rows

    def active(self, c: Cursor, session_id: str) -> list[Message] | None:
        c.execute(ACTIVE, (session_id,))
        load = self.rows.json_content
        messages = [load(row["message"]) for row in c.fetchall()]
        return messages if messages or self._exists(c, session_id) else None

    def history(self, c: Cursor, session_id: str) -> list[HistoryRow] | None:
        c.execute(HISTORY, (session_id,))
        rows = [self.rows.history(row) for row in c.fetchall()]
        return rows if rows or self._exists(c, session_id) else None

    def attempts(self, c: Cursor, session_id: str) -> list[AttemptRow] | None:
        c.execute(ATTEMPTS, (session_id,))
        rows = [self.rows.attempt(row) for row in c.fetchall()]
        return rows if rows or self._exists(c, session_id) else None

    def snapshot(self, c: Cursor, session_id: str) -> tuple[int, list[Message]] | None:
        c.execute("SELECT version FROM sessions WHERE session_id = ?", (session_id,))
        row = c.fetchone()
        if row is None:
            return None
        c.execute(ACTIVE, (session_id,))
        return row["version"], [self.rows.json_content(a["message"]) for a in c.fetchall()]

    def session(self, c: Cursor, session_id: str) -> SessionRow | None:
        c.execute(SESSION, (session_id,))
        row = c.fetchone()
        return self.rows.session(row) if row is not None else None

    def sessions(self, c: Cursor) -> list[SessionRow]:
        c.execute("SELECT * FROM sessions ORDER BY started_at, session_id")
        return [self.rows.session(row) for row in c.fetchall()]

    def message(self, c: Cursor, session_id: str, message_id: str) -> HistoryRow | None:
        c.execute(
            "SELECT * FROM message_history WHERE session_id = ? AND message_id = ?",
            (session_id, message_id),
        )
        row = c.fetchone()
        return self.rows.history(row) if row is not None else None

    def active_position(self, c: Cursor, session_id: str, message_id: str) -> int | None:
        c.execute(
            "SELECT position FROM active_messages WHERE session_id = ? AND message_id = ?",
            (session_id, message_id),
        )
        row = c.fetchone()
        return row["position"] if row is not None else None

    def attempt(self, c: Cursor, compaction_id: str) -> AttemptRow | None:
        c.execute("SELECT * FROM compaction_attempts WHERE compaction_id = ?", (compaction_id,))
        row = c.fetchone()
        return self.rows.attempt(row) if row is not None else None

    def session_rows(self, c: Cursor, session_id: str) -> SessionRows:
        session = self.session(c, session_id)
        c.execute(ACTIVE_ROWS, (session_id,))
        active = [self.rows.active(row) for row in c.fetchall()]
        c.execute(HISTORY, (session_id,))
        history = [self.rows.history(row) for row in c.fetchall()]
        c.execute(ATTEMPTS, (session_id,))
        attempts = [self.rows.attempt(row) for row in c.fetchall()]
        return SessionRows(session, active, history, attempts)

    @staticmethod
    def session_ids(c: Cursor) -> list[str]:
        c.execute(
            "SELECT session_id FROM sessions UNION SELECT session_id FROM active_messages "
            "UNION SELECT session_id FROM message_history "
            "UNION SELECT session_id FROM compaction_attempts"
        )
        return [row["session_id"] for row in c.fetchall()]

    def quarantined(self, c: Cursor) -> list[QuarantineRow]:
        c.execute(
            "SELECT position, transcript_id, session_id, version, topic, reason "
            f"FROM {QUARANTINE} ORDER BY position"
        )
        return [self.rows.quarantine(row) for row in c.fetchall()]

    @staticmethod
    def _exists(c: Cursor, session_id: str) -> bool:
        c.execute(EXISTS, (session_id,))
        return c.fetchone() is not None
