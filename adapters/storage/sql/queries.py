"""The queries users' calls make of the live view tables.

Each takes a cursor on views that reflect the whole log, opened by the views once they
checked the session is there to be read; but for `holds_whole` and `stored`, which the
write side asks of the views as they are.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ....domain.messages import Message
from ....projections.rows import AttemptRow, HistoryRow, QuarantineRow, SessionRow
from ....projections.views import SessionRows
from .dialect import Cursor
from .rows import RowReader
from .schema import QUARANTINE

ATTEMPTS = "SELECT * FROM compaction_attempts WHERE session_id = ? ORDER BY version"
SESSION = "SELECT * FROM sessions WHERE session_id = ?"
IDS_PER_QUERY = 500  # well under every backend's limit of parameters


class ViewQueries:
    def __init__(self, rows: RowReader) -> None:
        self.rows = rows
        self._columns = rows.dialect.columns
        session, active = self._columns.session_match(), self._columns.active_match()
        self._active = f"SELECT message FROM active_messages WHERE {active} ORDER BY position"
        self._active_rows = f"SELECT * FROM active_messages WHERE {active} ORDER BY position"
        self._history = f"SELECT * FROM message_history WHERE {session} ORDER BY seq"
        self._position = f"SELECT position FROM active_messages WHERE {session} AND message_id = ?"

    def active(self, c: Cursor, session_id: str) -> list[Message]:
        c.execute(self._active, self._columns.session_params(session_id))
        load = self.rows.json_content
        return [load(row["message"]) for row in c.fetchall()]

    def history(self, c: Cursor, session_id: str) -> list[HistoryRow]:
        c.execute(self._history, self._columns.session_params(session_id))
        return [self.rows.history(row) for row in c.fetchall()]

    def attempts(self, c: Cursor, session_id: str) -> list[AttemptRow]:
        c.execute(ATTEMPTS, (session_id,))
        return [self.rows.attempt(row) for row in c.fetchall()]

    def snapshot(self, c: Cursor, session_id: str) -> tuple[int, list[Message]]:
        c.execute("SELECT version FROM sessions WHERE session_id = ?", (session_id,))
        version = c.fetchone()["version"]
        return version, self.active(c, session_id)

    def quarantined_of(self, c: Cursor, transcript_id: str) -> list[QuarantineRow]:
        c.execute(
            f"SELECT * FROM {QUARANTINE} WHERE transcript_id = ? ORDER BY position",
            (transcript_id,),
        )
        return [self.rows.quarantine(row) for row in c.fetchall()]

    def session(self, c: Cursor, session_id: str) -> SessionRow | None:
        c.execute(SESSION, (session_id,))
        row = c.fetchone()
        return self.rows.session(row) if row is not None else None

    def sessions(self, c: Cursor, source: str | None = None) -> list[SessionRow]:
        if source is None:
            c.execute("SELECT * FROM sessions ORDER BY started_at, session_id")
        else:
            c.execute(
                "SELECT * FROM sessions WHERE source = ? ORDER BY started_at, session_id",
                (source,),
            )
        return [self.rows.session(row) for row in c.fetchall()]

    def message(self, c: Cursor, session_id: str, message_id: str) -> HistoryRow | None:
        c.execute(
            "SELECT * FROM message_history WHERE session_id = ? AND message_id = ?",
            (session_id, message_id),
        )
        row = c.fetchone()
        return self.rows.history(row) if row is not None else None

    def messages(self, c: Cursor, session_id: str, message_ids: list[str]) -> list[Message]:
        load = self.rows.json_content
        found = {
            row["message_id"]: load(row["message"])
            for row in self._history_rows(c, session_id, message_ids, "message")
        }
        return [found[message_id] for message_id in message_ids]

    def holds_whole(self, c: Cursor, session_id: str, version: int) -> bool:
        """Whether the session's row reflects its events up to `version`, none quarantined
        and the session not erased."""
        c.execute(
            "SELECT version, quarantined, erased_at FROM sessions WHERE session_id = ?",
            (session_id,),
        )
        row = c.fetchone()
        return (
            row is not None
            and row["version"] >= version
            and not row["quarantined"]
            and row["erased_at"] is None
        )

    def stored(
        self, c: Cursor, session_id: str, message_ids: Sequence[str]
    ) -> dict[str, tuple[Message, bool]]:
        """The history rows of these ids: (message as stored, whether rewound) by id."""
        load = self.rows.json_content
        rows = self._history_rows(c, session_id, message_ids, "message, rewound_version")
        return {
            row["message_id"]: (load(row["message"]), row["rewound_version"] is not None)
            for row in rows
        }

    def _history_rows(
        self, c: Cursor, session_id: str, message_ids: Sequence[str], columns: str
    ) -> Iterator[Any]:
        """The session's `message_history` rows of these ids (each once): `message_id` and
        `columns`, read `IDS_PER_QUERY` ids a statement."""
        unique = list(dict.fromkeys(message_ids))
        for start in range(0, len(unique), IDS_PER_QUERY):
            chunk = unique[start : start + IDS_PER_QUERY]
            c.execute(
                f"SELECT message_id, {columns} FROM message_history WHERE session_id = ? "
                f"AND message_id IN ({', '.join('?' * len(chunk))})",
                (session_id, *chunk),
            )
            yield from c.fetchall()

    def active_position(self, c: Cursor, session_id: str, message_id: str) -> int | None:
        c.execute(self._position, (*self._columns.session_params(session_id), message_id))
        row = c.fetchone()
        return row["position"] if row is not None else None

    def attempt(self, c: Cursor, compaction_id: str) -> AttemptRow | None:
        c.execute("SELECT * FROM compaction_attempts WHERE compaction_id = ?", (compaction_id,))
        row = c.fetchone()
        return self.rows.attempt(row) if row is not None else None

    def session_rows(self, c: Cursor, session_id: str) -> SessionRows:
        session = self.session(c, session_id)
        c.execute(self._active_rows, self._columns.session_params(session_id))
        active = [self.rows.active(row) for row in c.fetchall()]
        c.execute(self._history, self._columns.session_params(session_id))
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
