"""Chat messages as values: validation, identity and content hashing.

A message is a JSON object with a `role`. Every other key is kept exactly as given, so
messages round-trip whatever the provider's format (tool calls, reasoning, parts lists).
Its identity is the `id` key, held apart from its content: the content hash covers every
key but `id`, in canonical JSON, so two messages are "the same" exactly when they would
serialise the same.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any
from uuid import uuid4

from .errors import InvalidMessageError

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})

Message = dict[str, Any]

_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1


def new_message_id() -> str:
    return f"msg_{uuid4().hex}"


def split_id(message: object) -> tuple[str | None, Message]:
    """Validate a message and return its id (None when absent) and its content without it."""
    if not isinstance(message, Mapping):
        raise InvalidMessageError(f"a message must be a JSON object, not {type(message).__name__}")
    content = dict(message)
    message_id = content.pop("id", None)
    if message_id is not None:
        if not isinstance(message_id, str) or not message_id:
            raise InvalidMessageError(f"a message id must be a non-empty string: {message_id!r}")
        _check_text(message_id, "message id")
    role = content.get("role")
    if role not in ROLES:
        raise InvalidMessageError(
            f"message role must be one of {', '.join(sorted(ROLES))}: got {role!r}"
        )
    check_json(content, "message")
    return message_id, content


def as_message_list(messages: object) -> list[object]:
    """The messages of a call as a list; a lone message or a string is an error."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise InvalidMessageError("messages must be given as a list of message objects")
    return list(messages)


def content_hash(content: Message) -> str:
    """SHA-256 of the canonical JSON of a message's content (every key but `id`)."""
    canonical = json.dumps(
        content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def with_id(message_id: str, content: Mapping[str, Any]) -> Message:
    return {"id": message_id, **content}


def check_json(value: object, path: str) -> None:
    """Raise InvalidMessageError unless `value` is plain JSON.

    Plain JSON: finite numbers, integers within 64 bits, string keys, UTF-8 text.
    """
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        _check_text(value, path)
    elif isinstance(value, int):
        if not _INT_MIN <= value <= _INT_MAX:
            raise InvalidMessageError(f"{path}: integer {value} does not fit in 64 bits")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidMessageError(f"{path}: {value} is not a JSON number")
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidMessageError(f"{path}: key {key!r} is not a string")
            _check_text(key, path)
            check_json(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_json(item, f"{path}[{index}]")
    else:
        raise InvalidMessageError(f"{path}: a {type(value).__name__} is not a JSON value")


def safe_text(text: str) -> str:
    """Text that can be stored: lone surrogates (undecodable bytes) become escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _check_text(text: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidMessageError(f"{path}: text holds a lone surrogate") from None


def calls_made(content: Message) -> list[str]:
    """Ids of the tool calls an assistant message makes (OpenAI `tool_calls` form)."""
    if content.get("role") != "assistant" or not isinstance(content.get("tool_calls"), list):
        return []
    return [
        call["id"]
        for call in content["tool_calls"]
        if isinstance(call, dict) and isinstance(call.get("id"), str)
    ]


def call_answered(content: Message) -> str | None:
    """The tool call id a tool message answers, if any."""
    call_id = content.get("tool_call_id")
    return call_id if content.get("role") == "tool" and isinstance(call_id, str) else None
