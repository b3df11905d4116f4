"""Reading view rows back into the projection's row values, whatever the dialect.

Content columns (`message`, `metadata` — of a session or a compaction —, `state`, `reason`,
`error`) are opened with the store's content columns: as they are, or decrypted on an
encrypted store (see `sealing`). A row that cannot be read (JSON or a time damaged,
ciphertext that does not open) is a `StorageError` naming it (`DamagedRow`): a rebuild
writes it again from the log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ....domain.errors import StorageError
from ....domain.messages import Message
from ....projections.rows import ActiveRow, AttemptRow, HistoryRow, QuarantineRow, SessionRow
from ..sealing import ContentColumns, SealedColumns
from .dialect import Dialect

Row = Any  # a row read by column name
UNREADABLE = (ValueError, TypeError)  # what decoding a damaged value raises


class DamagedRow(StorageError):
    """A view row that cannot be read."""

    def __init__(self, view: str, key: str, error: BaseException) -> None:
        super().__init__(
            f"cannot read the views: the {view} row of {key} is damaged "
            f"({type(error).__name__}: {error}); rebuild them (transcripts projections rebuild)"
        )
        self.view, self.key, self.reason = view, key, f"{type(error).__name__}: {error}"


def message_key(session_id: object, message_id: object) -> str:
    return f"session {session_id!r}, message {message_id!r}"


class RowReader:
    def __init__(self, dialect: Dialect, content: ContentColumns) -> None:
        self.dialect = dialect
        self.content = content
        # A message or metadata column's value, decrypted on an encrypted store.
        self.json_content: Callable[[Any], Any] = (
            content.open_json if isinstance(content, SealedColumns) else dialect.load_json
        )

    def contents(self, session_id: str, rows: Sequence[tuple[int, Any]]) -> list[Message]:
        """The messages of `active_messages` (position, message) rows."""
        load = self.json_content
        try:
            return [load(message) for _, message in rows]
        except UNREADABLE:
            for position, message in rows:
                try:
                    load(message)
                except UNREADABLE as error:
                    key = f"session {session_id!r}, position {position}"
                    raise DamagedRow("active_messages", key, error) from error
            raise

    # Each reads one row; DamagedRow naming it if it cannot (no cost until then).

    def session(self, row: Row) -> SessionRow:
        try:
            return self._session(row)
        except UNREADABLE as error:
            raise DamagedRow("sessions", f"session {row['session_id']!r}", error) from error

    def active(self, row: Row) -> ActiveRow:
        try:
            return self._active(row)
        except UNREADABLE as error:
            key = message_key(row["session_id"], row["message_id"])
            raise DamagedRow("active_messages", key, error) from error

    def history(self, row: Row) -> HistoryRow:
        try:
            return self._history(row)
        except UNREADABLE as error:
            key = message_key(row["session_id"], row["message_id"])
            raise DamagedRow("message_history", key, error) from error

    def attempt(self, row: Row) -> AttemptRow:
        try:
            return self._attempt(row)
        except UNREADABLE as error:
            key = f"compaction {row['compaction_id']!r}"
            raise DamagedRow("compaction_attempts", key, error) from error

    def _session(self, row: Row) -> SessionRow:
        time = self.dialect.load_time
        return SessionRow(
            session_id=row["session_id"],
            transcript_id=row["transcript_id"],
            source=row["source"],
            model=row["model"],
            parent_id=row["parent_id"],
            metadata=self.json_content(row["metadata"]),
            started_at=time(row["started_at"]),
            last_event_at=time(row["last_event_at"]),
            version=row["version"],
            message_count=row["message_count"],
            active_count=row["active_count"],
            compactions_committed=row["compactions_committed"],
            compactions_failed=row["compactions_failed"],
            quarantined=row["quarantined"],
            erased_at=None if row["erased_at"] is None else time(row["erased_at"]),
            rewound_count=row["rewound_count"],
            state=self.json_content(row["state"]),
            context_version=row["context_version"],
            position_base=row["position_base"],
        )

    def _active(self, row: Row) -> ActiveRow:
        return ActiveRow(
            row["session_id"],
            row["position"],
            row["message_id"],
            row["role"],
            self.json_content(row["message"]),
        )

    def _history(self, row: Row) -> HistoryRow:
        return HistoryRow(
            session_id=row["session_id"],
            seq=row["seq"],
            message_id=row["message_id"],
            role=row["role"],
            message=self.json_content(row["message"]),
            active=bool(row["active"]),
            superseded_by=row["superseded_by"],
            added_by=row["added_by"],
            appended_at=self.dialect.load_time(row["appended_at"]),
            appended_version=row["appended_version"],
            rewound_version=row["rewound_version"],
            restored_version=row["restored_version"],
            log_position=row["log_position"],
        )

    def _attempt(self, row: Row) -> AttemptRow:
        return AttemptRow(
            compaction_id=row["compaction_id"],
            session_id=row["session_id"],
            version=row["version"],
            status=row["status"],
            reason=self.content.open_text(row["reason"]) or "",
            failure=row["failure"],
            error=self.content.open_text(row["error"]),
            based_on_version=row["based_on_version"],
            superseded_ids=self.dialect.load_json(row["superseded_ids"]),
            added_ids=self.dialect.load_json(row["added_ids"]),
            superseded_count=row["superseded_count"],
            added_count=row["added_count"],
            tokens_before=row["tokens_before"],
            tokens_after=row["tokens_after"],
            at=self.dialect.load_time(row["at"]),
            metadata=None if row["metadata"] is None else self.json_content(row["metadata"]),
        )

    @staticmethod
    def quarantine(row: Row) -> QuarantineRow:
        return QuarantineRow(
            row["position"],
            row["transcript_id"],
            row["session_id"],
            row["version"],
            row["topic"],
            row["reason"],
        )
