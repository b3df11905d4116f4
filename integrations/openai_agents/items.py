"""The Agents SDK's items as stored messages, and back.

One item is one message: `{"role": R, "content": text, tool-call facts, "openai_agents":
{"item": <the item exactly as given>}}`. The role and the facts are what the store uses:
`content` is the text full-text search indexes, an assistant's `tool_calls[].id` and a
tool message's `tool_call_id` let the compaction contract keep a tool result with its call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any
from uuid import uuid4

from transcripts import InvalidMessageError

KEY = "openai_agents"
FUNCTION_CALL = "function_call"
FUNCTION_OUTPUT = "function_call_output"
_MESSAGE_ROLES = frozenset({"user", "assistant", "system", "developer"})

Item = dict[str, Any]


def derived_id(item: Mapping[str, Any]) -> str | None:
    """The id of a function call or its output, from its `call_id`: a re-sent tool item is
    the same message. None for every other item."""
    kind, call_id = item.get("type"), item.get("call_id")
    if kind in (FUNCTION_CALL, FUNCTION_OUTPUT) and isinstance(call_id, str) and call_id:
        return f"{kind}:{call_id}"
    return None


def call_of(message: Mapping[str, Any]) -> str | None:
    """The id of the function call a stored function call output answers (None: not one)."""
    stored = message.get(KEY)
    item = stored.get("item") if isinstance(stored, Mapping) else None
    if isinstance(item, Mapping) and item.get("type") == FUNCTION_OUTPUT:
        call_id = item.get("call_id")
        if isinstance(call_id, str) and call_id and message.get("id") == derived_id(item):
            return f"{FUNCTION_CALL}:{call_id}"
    return None


def fresh_id() -> str:
    return f"item_{uuid4().hex}"


def to_message(item: object) -> dict[str, Any]:
    """The stored message of an item, without an id."""
    if not isinstance(item, Mapping):
        raise InvalidMessageError(f"an item must be a JSON object, not {type(item).__name__}")
    kind = item.get("type")
    message: dict[str, Any] = {"role": _role(item), "content": " ".join(_texts(item))}
    call_id = item.get("call_id")
    if isinstance(kind, str) and isinstance(call_id, str) and call_id:
        if kind.endswith("_call"):
            arguments = item.get("arguments", item.get("input", ""))
            function = {"name": str(item.get("name", kind)), "arguments": _text(arguments)}
            message["tool_calls"] = [{"id": call_id, "type": "function", "function": function}]
        elif kind.endswith("_call_output"):
            message["tool_call_id"] = call_id
    message[KEY] = {"item": dict(item)}
    return message


def item_of(message: Mapping[str, Any]) -> Item:
    """The item a stored message holds; a message stored by other means becomes a plain
    `{"role", "content"}` message."""
    stored = message.get(KEY)
    if isinstance(stored, Mapping) and isinstance(stored.get("item"), Mapping):
        return dict(stored["item"])
    return {"role": message["role"], "content": message.get("content") or ""}


def _role(item: Mapping[str, Any]) -> str:
    kind, role = item.get("type"), item.get("role")
    if kind in (None, "message") and role in _MESSAGE_ROLES:
        return str(role)
    if isinstance(kind, str) and kind.endswith("_output"):
        return "tool"
    if kind is None:
        return str(role)  # not a role the store takes: it says so
    return "assistant"


def _texts(item: Mapping[str, Any]) -> Iterator[str]:
    """The words of an item: its content, a tool's output, a reasoning summary."""
    for key in ("content", "output", "summary"):
        text = _text(item.get(key))
        if text:
            yield text


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(filter(None, (_part(part) for part in value)))
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False)
    return ""


def _part(part: object) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping):
        for key in ("text", "refusal"):
            if isinstance(part.get(key), str):
                return part[key]
    return ""
