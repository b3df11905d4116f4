"""Reading one session's active context or history a page at a time: keyset pagination.

Each page is `size` rows after a position (`active_messages.position`, `message_history.seq`),
read through the key that orders them, so a page costs the same wherever it starts; the
last N rows start after the position that `tail_start` finds with one indexed look-up.
Where ids are not keys themselves (PostgreSQL), the session is matched through its digest
too, so that the unique (digest, position) index serves the order. Active rows are read from
`message_history`, above the session's position base (`ColumnTypes.active_positions`).
"""

from __future__ import annotations

from ....domain.messages import Message
from ....projections.rows import HistoryRow
from ....projections.views import PageMark
from .dialect import Cursor
from .rows import RowReader
from .schema import LIVE

MAX_VERSION = 2**63 - 1


class PageQueries:
    def __init__(self, rows: RowReader) -> None:
        self.rows = rows
        self._columns = rows.dialect.columns
        self._session = self._columns.session_match()

    def active(
        self, c: Cursor, session_id: str, after: int, size: int
    ) -> list[tuple[int, Message]]:
        """(position, message) of up to `size` active messages after position `after`."""
        rows = self.rows.dialect.tuples(
            c,
            f"{self._columns.active_positions(LIVE, 'h.message')} ORDER BY h.position LIMIT ?",
            (session_id, *self._columns.active_params(session_id, after), size),
        )
        messages = self.rows.contents(session_id, rows)
        return [(position, message) for (position, _), message in zip(rows, messages, strict=True)]

    def history(self, c: Cursor, session_id: str, after: int, size: int) -> list[HistoryRow]:
        """Up to `size` message_history rows after seq `after`, in storage order."""
        c.execute(
            f"SELECT * FROM message_history WHERE {self._session} AND seq > ? ORDER BY seq LIMIT ?",
            (*self._key(session_id), after, size),
        )
        return [self.rows.history(row) for row in c.fetchall()]

    def tail_start(self, c: Cursor, table: str, session_id: str, count: int) -> int:
        """The position after which the last `count` rows of the session's `table` begin
        (0: from the first, when it has no more rows than that)."""
        if table == "active_messages":
            c.execute(
                f"{self._columns.active_positions(LIVE, 'h.message_id', name='at')} "
                "ORDER BY h.position DESC LIMIT 1 OFFSET ?",
                (session_id, *self._columns.active_params(session_id), count),
            )
        else:
            c.execute(
                f"SELECT seq AS at FROM {table} WHERE {self._session} "
                "ORDER BY seq DESC LIMIT 1 OFFSET ?",
                (*self._key(session_id), count),
            )
        row = c.fetchone()
        return 0 if row is None else int(row["at"])

    def event_versions(
        self, c: Cursor, stream: str, topics: list[str], after: int, until: int | None
    ) -> list[int]:
        """The versions of a stream's stored events of `topics` in (after, until], through
        the log's key (stream, version), without reading their state."""
        c.execute(
            f"SELECT originator_version AS version FROM {self.rows.dialect.events_table} "
            f"WHERE originator_id = ? AND topic IN ({', '.join('?' * len(topics))}) "
            "AND originator_version > ? AND originator_version <= ? "
            "ORDER BY originator_version",
            (stream, *topics, after, MAX_VERSION if until is None else until),
        )
        return [int(row["version"]) for row in c.fetchall()]

    @staticmethod
    def mark(c: Cursor, session_id: str) -> PageMark:
        """The version of the session's last compaction, rewind or restore."""
        c.execute("SELECT context_version FROM sessions WHERE session_id = ?", (session_id,))
        return int(c.fetchone()["context_version"])

    def _key(self, session_id: str) -> tuple[str, ...]:
        return self._columns.session_params(session_id)
