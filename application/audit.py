"""One compaction attempt read whole (`TranscriptStore.compaction`): its audit row from the
views, and from the log its event (one, at the version the row names), which keeps what the
attempt proposed and the exception it met."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..domain.errors import CompactionNotFoundError
from ..domain.messages import with_id
from ..domain.transcript import Transcript
from ..projections.views import TranscriptViews
from . import arguments
from .event_log import TranscriptLog
from .explaining import event_at


class AuditReads:
    """The audit reads of `TranscriptStore` (a base class: it uses the store's views, log
    and retried `_read`)."""

    _views: TranscriptViews
    _log: TranscriptLog
    _read: Callable[..., Any]

    def compaction(self, session_id: str, compaction_id: str) -> dict[str, Any]:
        """One attempt whole: its `compactions()` entry with `session_id`, and
        - `proposed`: the new messages of its replacement (with their ids where they have
          one): those it added if it committed, those refused if it failed; None when
          nothing was proposed (the summarizer raised), or the attempt failed before this
          was kept (events of an older version);
        - `exception`: what the summarizer raised (`type`, `message`, `traceback`), or None.
        CompactionNotFoundError if the session has no such attempt."""
        session_id = arguments.session_id(session_id)
        arguments.text(compaction_id, "compaction id")
        return self._read(lambda: self._compaction(session_id, compaction_id))

    def _compaction(self, session_id: str, compaction_id: str) -> dict[str, Any]:
        row = self._views.attempt(compaction_id) if "\x00" not in compaction_id else None
        if row is None or row.session_id != session_id:
            self._views.check_session(session_id)
            raise CompactionNotFoundError(session_id, compaction_id)
        committed = row.status == "committed"
        kind = Transcript.CompactionCommitted if committed else Transcript.CompactionFailed
        event = event_at(self._log, session_id, row.version, kind)
        if isinstance(event, Transcript.CompactionCommitted):
            proposed = [with_id(new["id"], new["message"]) for new in event.added]
            exception = None
        else:
            proposed, exception = event.proposed, event.exception
        entry = {"session_id": session_id, **row.as_audit_entry()}
        return {**entry, "proposed": proposed, "exception": exception}
