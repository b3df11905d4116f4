"""Reading view rows back into the projection's row values, whatever the dialect.

Content columns (`message`, `metadata` — of a session or a compaction —, `state`, `reason`,
`error`) are opened with the store's
content columns: as they are, or decrypted on an encrypted store (see `sealing`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....projections.rows import ActiveRow, AttemptRow, HistoryRow, QuarantineRow, SessionRow
from ..sealing import ContentColumns, SealedColumns
from .dialect import Dialect

Row = Any  # a row read by column name


class RowReader:
    def __init__(self, dialect: Dialect, content: ContentColumns) -> None:
        self.dialect = dialect
        self.content = content
        # A message or metadata column's value, decrypted on an encrypted store.
        self.json_content: Callable[[Any], Any] = (
            content.open_json if isinstance(content, SealedColumns) else dialect.load_json
        )

    def session(self, row: Row) -> SessionRow:
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
        )

    def active(self, row: Row) -> ActiveRow:
        return ActiveRow(
            row["session_id"],
            row["position"],
            row["message_id"],
            row["role"],
            self.json_content(row["message"]),
        )

    def history(self, row: Row) -> HistoryRow:
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
        )

    def attempt(self, row: Row) -> AttemptRow:
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
