"""Stored events that cannot be read: what decoding them raises, and the errors users see."""

from __future__ import annotations

from dataclasses import fields
from functools import cache

from eventsourcing.utils import TopicError

from ..domain.errors import StorageError
from ..domain.transcript import Transcript

# What decoding or replaying a damaged stored event raises (the library's decoding errors
# are ValueErrors, an unknown topic a TopicError; an event of the wrong shape fails as it is
# built or applied).
UNREADABLE = (ValueError, TypeError, AttributeError, KeyError, TopicError)


def with_every_field(event: Transcript.Event) -> Transcript.Event:
    """The event, if it has every field of its type (a damaged one decodes without some)."""
    state = vars(event)
    missing = [name for name in field_names(type(event)) if name not in state]
    if missing:
        raise TypeError(
            f"{type(event).__name__} at originator_version {event.originator_version} "
            f"has no {', '.join(missing)}"
        )
    return event


@cache
def field_names(event_type: type) -> tuple[str, ...]:
    return tuple(field.name for field in fields(event_type))


def corrupt_event(session_id: str, version: int, error: BaseException) -> StorageError:
    return StorageError(
        f"cannot read session {session_id!r}: a stored event is corrupt (version {version}: "
        f"{type(error).__name__}: {error}); the views leave it out (quarantined)"
    )


def corrupt_session(session_id: str, error: BaseException) -> StorageError:
    return StorageError(
        f"cannot read session {session_id!r}: a stored event is corrupt "
        f"({type(error).__name__}: {error}); the views leave it out (quarantined)"
    )
