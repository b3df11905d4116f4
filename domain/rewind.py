"""Rewinding: which active messages a rewind takes out of the context, and the rule it keeps.

A rewind takes the tail of the active context out of it: the last `count` active messages
(all of them when there are fewer), or every active message after the active message `to`.
Rewound messages stay stored (history keeps them, marked rewound); one appended again with
identical content is restored, at the end of the context. A rewind must not leave a tool
message in the context without the assistant message that makes its call.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from .errors import MessageNotFoundError, TranscriptError
from .messages import safe_text


def plan_rewind(
    session_id: str,
    active: Sequence[str],
    stored: Collection[str],
    *,
    count: int | None,
    to: str | None,
) -> list[str]:
    """The ids a rewind takes out, in their active order (none: nothing to rewind).

    `to` must name an active message: MessageNotFoundError if the session never stored it,
    TranscriptError if it is not active (superseded or rewound).
    """
    if count is not None:
        return list(active[max(0, len(active) - count) :])
    if to not in active:
        if to not in stored:
            raise MessageNotFoundError(session_id, str(to))
        raise TranscriptError(
            f"message {to!r} of session {session_id!r} is not active: a rewind goes back to "
            "an active message"
        )
    return list(active[active.index(to) + 1 :])


def taken_out(
    active: Sequence[str],
    message_ids: Collection[str],
    calls: Mapping[str, str],
    answers: Mapping[str, str],
) -> list[str]:
    """The active ones of `message_ids`, in their active order: what a rewind of them takes
    out. TranscriptError if that would leave a tool message without the call it answers.

    `calls` maps a tool call id to the active assistant message making it, `answers` an active
    tool message to the call id it answers. Results follow their calls, so rewinding a tail
    leaves none behind, unless a result was appended before its call.
    """
    rewound = set(message_ids)
    remaining = [message_id for message_id in active if message_id not in rewound]
    for message_id in remaining:
        call_id = answers.get(message_id)
        maker = calls.get(call_id) if call_id is not None else None
        if maker is not None and maker in rewound:
            raise TranscriptError(
                f"rewinding message {maker!r} would leave tool message {message_id!r}, which "
                "comes before it, without the call it answers: rewind to before "
                f"{message_id!r}"
            )
    return [message_id for message_id in active if message_id in rewound]


class Rewinding:
    """The rewind commands of a transcript (a Transcript mixin)."""

    session_id: str
    active: list[str]
    hashes: dict[str, str]
    calls: dict[str, str]
    answers: dict[str, str]
    Rewound: type[Any]
    trigger_event: Callable[..., Any]
    _check_not_erased: Callable[[], None]
    _check_complete: Callable[[], None]

    def rewind_target(self, *, count: int | None, to: str | None) -> list[str]:
        """The ids a rewind takes out: the last `count` active, or every active after `to`."""
        self._check_not_erased()
        self._check_complete()
        return plan_rewind(self.session_id, self.active, self.hashes, count=count, to=to)

    def rewind(self, message_ids: Sequence[str], *, reason: str) -> list[str]:
        """Take the active ones of `message_ids` out of the context in one Rewound event;
        return them in their active order. None active (a rewind that landed): nothing."""
        self._check_not_erased()
        self._check_complete()
        gone = taken_out(self.active, message_ids, self.calls, self.answers)
        if gone:
            self.trigger_event(self.Rewound, message_ids=gone, reason=safe_text(reason))
        return gone
