"""`explain`: why a message is (or is not) in the active context.

The views say which event added the message, where it is in the context and which
compaction superseded it; a rewind holding it out and the append that last restored it are
named by their versions in its history row, and read from the log, one event each.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..domain.errors import MessageNotFoundError, StorageError
from ..domain.transcript import Transcript
from ..projections.views import TranscriptViews
from .event_log import TranscriptLog
from .results import explanation

E = TypeVar("E", bound=Transcript.Event)


def explain(
    views: TranscriptViews, log: TranscriptLog, session_id: str, message_id: str
) -> dict[str, Any]:
    if message_id and "\x00" not in message_id:  # else never stored (a valid id has no NUL)
        row = views.message(session_id, message_id)
    else:
        views.check_session(session_id)
        row = None
    if row is None:
        raise MessageNotFoundError(session_id, message_id)
    adding = views.attempt(row.added_by) if row.added_by else None
    superseding = views.attempt(row.superseded_by) if row.superseded_by else None
    position = views.active_position(session_id, message_id)
    rewinding = event_at(log, session_id, row.rewound_version, Transcript.Rewound)
    restoring = event_at(log, session_id, row.restored_version, Transcript.MessageAppended)
    return explanation(row, adding, superseding, position, rewinding, restoring)


def event_at(log: TranscriptLog, session_id: str, version: int | None, kind: type[E]) -> E | None:
    """The session's event at `version` (None: none), which the views say is a `kind`."""
    if version is None:
        return None
    [event] = log.session_events(session_id, lte=version, gt=version - 1)
    if not isinstance(event, kind):
        raise StorageError(
            f"the views of session {session_id!r} name version {version} a {kind.__name__} "
            f"event, but it is a {type(event).__name__} (see `transcripts projections verify`)"
        )
    return event
