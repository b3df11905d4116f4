"""The queries users' calls make of the live view tables.

Each takes a cursor on views that reflect the whole log, opened by the views once they
checked the session is there to be read; but for `left_out` and `context`, which the write
side asks of the views as they are, inside its own transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from ....domain.messages import Message
from ....projections.rows import AttemptRow, HistoryRow, QuarantineRow, SessionRow
from ....projections.views import SessionRows
from .catch_up import TRACKING_NAME
from .dialect import Cursor
from .rows import UNREADABLE, DamagedRow, RowReader, message_key
from .schema import LIVE, QUARANTINE

# The versions of a transcript's events the views quarantined.
LEFT_OUT = f"SELECT version FROM {QUARANTINE} WHERE transcript_id = ?"

T = TypeVar("T")
ATTEMPTS = "SELECT * FROM compaction_attempts WHERE session_id = ? ORDER BY version"
ROWS_PER_PAGE = 1_000  # rows a statement reads when a session's rows are read whole
# compaction attempts read at a time: one holds the ids it superseded, as many as a context
ATTEMPTS_PER_PAGE = 1
SESSION = "SELECT * FROM sessions WHERE session_id = ?"
IDS_PER_QUERY = 500  # well under every backend's limit of parameters
# A context read as one JSON array at most: past about 128 KiB (where glibc maps an
# allocation afresh: each of the text's copies then faults its pages in, it seems) the
# rows cost less (50 of 8,000 characters: 1.6x; 10,000 of 400: 1.85x). A session found
# larger is read row by row from then on, until it is found smaller; LARGE_SESSIONS at most.
ARRAY_ROWS = 1_000
ARRAY_LENGTH = 96 * 1024  # the array's bytes, or the rows' characters: alike for a threshold
LARGE_SESSIONS = 1_024


class ViewQueries:
    def __init__(self, rows: RowReader) -> None:
        self.rows = rows
        self._columns = rows.dialect.columns
        session = self._columns.session_match()
        active_row = self._columns.active_positions(
            LIVE, "h.session_id, h.message_id, h.role, h.message"
        )
        whole = self._columns.active_rows(LIVE, "h.position, h.message")  # history positions
        self._active = f"{whole} ORDER BY h.position"
        self._history = f"SELECT * FROM message_history WHERE {session} ORDER BY seq"
        self._pages = {  # a page of the rows of a session after a key, by that key
            "position": f"{active_row} ORDER BY h.position LIMIT ?",
            "seq": f"SELECT * FROM message_history WHERE {session} AND seq > ? "
            "ORDER BY seq LIMIT ?",
            "version": "SELECT * FROM compaction_attempts WHERE session_id = ? AND version > ? "
            "ORDER BY version LIMIT ?",
        }
        self._position = f"{active_row} AND h.message_id = ?"
        dialect = rows.dialect
        self._current_active = (  # the turn's read: one column, the check in its WHERE
            self._columns.readable_active_rows(LIVE, "h.message", dialect.reflects_log)
            + " ORDER BY h.position"
        )
        array = self._columns.json_text_array
        self._current_array = (  # the same as one JSON text, where the dialect can: one decode
            None
            if array is None or rows.content.encrypted
            else f"SELECT {array.format(texts='message')}, COUNT(*) "
            f"FROM ({self._current_active} LIMIT ?) AS active"
        )
        self._large: set[str] = set()  # sessions last found too large for one array
        self._tracked = dialect.tracked_params(TRACKING_NAME)
        readable = "s.transcript_id IS NOT NULL AND s.erased_at IS NULL AND s.quarantined = 0"
        self._context = (  # one statement: one moment of the views, whoever projects them
            f"SELECT 0 AS position, {self._columns.json_array}(s.version, {readable}) "
            "AS message FROM (SELECT 1 AS one) AS one LEFT JOIN sessions AS s "
            f"ON s.session_id = ? UNION ALL {whole} ORDER BY position"
        )

    def active(self, c: Cursor, session_id: str) -> list[Message]:
        rows = self.rows.dialect.tuples(c, self._active, self._columns.active_params(session_id))
        return self.rows.contents(session_id, rows)

    def current_active(self, session_id: str) -> list[Message] | None:
        """The session's active messages, in one statement read on its own, if the views
        reflect the whole log and can answer for the session and it has any, all readable;
        None otherwise (read it by `CatchUp.session_active`, which says why)."""
        params = (*self._columns.active_params(session_id), *self._tracked)
        load = self.rows.json_content
        read = self.rows.dialect.read_tuples
        try:
            if self._current_array is not None and session_id not in self._large:
                ((array, count),) = read(self._current_array, (*params, ARRAY_ROWS))
                if count == ARRAY_ROWS or array is not None and len(array) > ARRAY_LENGTH:
                    self._remember_large(session_id)
                if count < ARRAY_ROWS:
                    messages = None if array is None else load(array)
                    # each row one JSON value: a damaged one breaks the array or its count
                    whole = isinstance(messages, list) and len(messages) == count
                    return messages if whole else None
            rows = read(self._current_active, params)
            if session_id in self._large and len(rows) < ARRAY_ROWS:
                if sum(len(message) for (message,) in rows) <= ARRAY_LENGTH:
                    self._large.discard(session_id)
            return [load(message) for (message,) in rows] if rows else None
        except UNREADABLE:
            return None

    def _remember_large(self, session_id: str) -> None:
        if len(self._large) >= LARGE_SESSIONS:
            self._large.clear()
        self._large.add(session_id)

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
        found = {}
        for row in self._history_rows(c, session_id, message_ids, "message"):
            try:
                found[row["message_id"]] = self.rows.json_content(row["message"])
            except UNREADABLE as error:
                key = message_key(session_id, row["message_id"])
                raise DamagedRow("message_history", key, error) from error
        return [found[message_id] for message_id in message_ids]

    @staticmethod
    def left_out(c: Cursor, transcript_id: str) -> list[int]:
        """The versions of the transcript's events the views quarantined."""
        c.execute(LEFT_OUT, (transcript_id,))
        return [row["version"] for row in c.fetchall()]

    def context(
        self, c: Cursor, session_id: str, message_ids: Sequence[str]
    ) -> tuple[int, list[Message], list[Message]] | None:
        """The session's version, active messages and messages of `message_ids`, if the
        views can say (see `TranscriptViews.context_in`)."""
        dialect, load = self.rows.dialect, self.rows.json_content
        (_, state), *rows = dialect.tuples(
            c, self._context, (session_id, *self._columns.active_params(session_id))
        )
        try:
            version, readable = dialect.load_json(state)
            if not readable:
                return None
            active = [load(message) for _, message in rows]
            others = [
                load(row["message"])
                for row in self._history_rows(c, session_id, message_ids, "message")
            ]
        except (ValueError, TypeError):  # a damaged row: the log will say
            return None
        if not all(_has_id(message) for message in [*active, *others]):
            return None
        return version, active, others

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
        params = (session_id, *self._columns.active_params(session_id), message_id)
        c.execute(self._position, params)
        row = c.fetchone()
        return row["position"] if row is not None else None

    def attempt(self, c: Cursor, compaction_id: str) -> AttemptRow | None:
        c.execute("SELECT * FROM compaction_attempts WHERE compaction_id = ?", (compaction_id,))
        row = c.fetchone()
        return self.rows.attempt(row) if row is not None else None

    def session_rows(self, c: Cursor, session_id: str) -> SessionRows:
        """Every row of the session, those that cannot be read named apart; the rows of
        each view are read a page at a time as they are iterated (once, in order, while the
        cursor is open)."""
        unreadable: list[tuple[str, str, str]] = []

        def read(rows: Iterable[Any], decode: Callable[[Any], T], key: str) -> Iterator[T]:
            for row in rows:
                try:
                    yield decode(row)
                except DamagedRow as damaged:
                    unreadable.append((damaged.view, row[key], damaged.reason))

        c.execute(SESSION, (session_id,))
        session = list(read(c.fetchall(), self.rows.session, "session_id"))
        params = self._columns.session_params(session_id)
        active = (session_id, *params, session_id)  # `active_positions`' but the one after
        return SessionRows(
            session[0] if session else None,
            read(self._paged(c, "position", active), self.rows.active, "message_id"),
            read(self._paged(c, "seq", params), self.rows.history, "message_id"),
            read(
                self._paged(c, "version", (session_id,), ATTEMPTS_PER_PAGE),
                self.rows.attempt,
                "compaction_id",
            ),
            unreadable,
        )

    def _paged(
        self, c: Cursor, key: str, params: tuple[str, ...], size: int = ROWS_PER_PAGE
    ) -> Iterator[Any]:
        """A session's rows of one view in the order of `key`, read `size` at a time."""
        after = 0
        while True:
            c.execute(self._pages[key], (*params, after, size))
            page = c.fetchall()
            yield from page
            if len(page) < size:
                return
            after = page[-1][key]

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


def _has_id(message: object) -> bool:
    return isinstance(message, dict) and isinstance(message.get("id"), str)
