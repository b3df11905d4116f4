"""Checks of the arguments users pass: a wrong type or range is a `TranscriptError` that says
what was expected, before anything is read or written.

Session ids that could never have been started (empty, or holding NUL, which PostgreSQL
text cannot) name no session: reads answer SessionNotFoundError for them, as for any
unknown id.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..domain.errors import InvalidMessageError, SessionNotFoundError, TranscriptError
from ..domain.messages import plain_json

MAX_INTEGER = 2**63 - 1  # what every backend's integer columns hold


def session_id(value: object) -> str:
    """A session id to look up."""
    if not storable_session_id(value):
        raise SessionNotFoundError(value)  # type: ignore[arg-type]  # `start` refuses it
    return value  # type: ignore[return-value]


def storable_session_id(value: object) -> bool:
    """Whether `value` is a string that may name a session (TranscriptError if no string)."""
    if not isinstance(value, str):
        raise TranscriptError(f"a session id is a string: {value!r}")
    return bool(value) and "\x00" not in value


def message_id(value: object) -> str:
    if not isinstance(value, str):
        raise TranscriptError(f"a message id is a string: {value!r}")
    return value


def rewind_target(count: object, to: object) -> tuple[int | None, str | None]:
    """Exactly one of `count` (an integer from 1) and `to` (a message id)."""
    if (count is None) == (to is None):
        raise TranscriptError(
            f"a rewind takes exactly one of count and to: count={count!r}, to={to!r}"
        )
    if count is not None:
        return integer(count, "a rewind count"), None
    return None, message_id(to)


def text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise TranscriptError(f"{name} must be a string: {value!r}")
    return value


def optional_text(value: object, name: str) -> str | None:
    return None if value is None else text(value, name)


def flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise TranscriptError(f"{name} must be True or False: {value!r}")
    return value


def integer(value: object, name: str, *, least: int = 1) -> int:
    """An integer from `least` to the largest every backend stores (bools are not)."""
    if type(value) is not int or not least <= value <= MAX_INTEGER:
        raise TranscriptError(f"{name} is an integer from {least} to {MAX_INTEGER}: {value!r}")
    return value


def optional_integer(value: object, name: str, *, least: int = 0) -> int | None:
    return None if value is None else integer(value, name, least=least)


def optional_json_object(value: object, name: str) -> dict[str, Any] | None:
    """None, or a JSON object (plain JSON, as a message holds), as it is stored (see
    `plain_json`)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TranscriptError(f"{name} must be a JSON object or None: {value!r}")
    try:
        plain, _ = plain_json(value, name)
    except InvalidMessageError as error:
        raise TranscriptError(str(error)) from None
    return plain


def callback(value: object, name: str) -> Callable[..., Any] | None:
    if value is not None and not callable(value):
        raise TranscriptError(f"{name} must be callable or None: {value!r}")
    return value


def function(value: object, name: str) -> Callable[..., Any]:
    if not callable(value):
        raise TranscriptError(f"{name} must be callable: {value!r}")
    return value


def is_list(value: object) -> bool:
    """Whether `value` is a sequence of items (not a string, bytes or a mapping)."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray))


def stop_event(value: object) -> threading.Event:
    if not isinstance(value, threading.Event):
        raise TranscriptError(f"stop must be a threading.Event: {value!r}")
    return value
