"""The rewind workflow: which messages a call rewinds is decided once, then written.

The first try of the write decides, on the transcript as stored under the write lock, which
active messages go (the last `count`, or every one after `to`); every retry writes those
same ids. A retry after a commit that landed but was reported failed finds none of them
active and writes nothing, so a call rewinds at most once and returns what it decided.
"""

from __future__ import annotations

from ..domain.transcript import Transcript
from .context import Context
from .event_log import TranscriptLog


def rewind_once(
    log: TranscriptLog, session_id: str, *, count: int | None, to: str | None, reason: str
) -> tuple[list[str], Context]:
    """Rewind the session's active tail in one Rewound event; return the ids decided, and
    the session's context once it is stored (which holds their messages)."""
    decided: list[str] | None = None

    def command(transcript: Transcript) -> list[str]:
        nonlocal decided
        if decided is None:
            decided = transcript.rewind_target(count=count, to=to)
        transcript.rewind(decided, reason=reason)
        return decided

    return log.write_in_context(session_id, command, messages_of=list)
