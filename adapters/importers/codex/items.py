"""A Codex response item (a Responses API item) as a stored message.

One item is one message: `{"role", "content", tool-call facts, "codex": {"item": <the item
exactly as Codex wrote it>, "line": …, …}}`. The role, the text and the facts are what the
store uses: `content` is what full-text search indexes; an assistant's `tool_calls[].id` and
a tool message's `tool_call_id` (both the item's `call_id`) let the compaction contract keep a
tool output with its call. Roles:

- a `message` item: its own role (`user`, `developer`, `system`, `assistant`);
- a `*_output` item (`function_call_output`, `custom_tool_call_output`, …): `tool`;
- everything else (`function_call`, `custom_tool_call`, `local_shell_call`, `web_search_call`,
  `reasoning`, `compaction`, and item types this importer does not know): `assistant`; a
  `*_call` with a `call_id` also gets a `tool_calls` entry naming the call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

KEY = "codex"
MESSAGE_ROLES = frozenset({"user", "developer", "system", "assistant"})
KNOWN_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "tool_search_call",
        "tool_search_output",
        "web_search_call",
        "image_generation_call",
        "compaction",
    }
)

Item = dict[str, Any]


def to_message(item: Item, provenance: Mapping[str, Any]) -> dict[str, Any]:
    """The stored message of an item (without an id); `provenance` says where it was read
    (its line, and what else the rollout says of it)."""
    kind = item.get("type")
    role = role_of(item)
    message: dict[str, Any] = {"role": role, "content": " ".join(_texts(item))}
    call_id = item.get("call_id")
    if isinstance(call_id, str) and call_id:
        if role == "tool":
            message["tool_call_id"] = call_id
        elif isinstance(kind, str) and kind.endswith("_call"):
            arguments = item.get("arguments", item.get("input", item.get("action", "")))
            function = {"name": str(item.get("name") or kind), "arguments": _text(arguments)}
            message["tool_calls"] = [{"id": call_id, "type": "function", "function": function}]
    message[KEY] = {"item": item, **provenance}
    return message


def role_of(item: Mapping[str, Any]) -> str:
    kind, role = item.get("type"), item.get("role")
    if kind == "message" and role in MESSAGE_ROLES:
        return str(role)
    if isinstance(kind, str) and kind.endswith("_output"):
        return "tool"
    return "assistant"


def item_of(message: Mapping[str, Any]) -> Item | None:
    """The item a stored message holds, if an import stored it."""
    stored = message.get(KEY)
    return stored.get("item") if isinstance(stored, Mapping) else None


def _texts(item: Mapping[str, Any]) -> Iterator[str]:
    """The words of an item: its content, a tool's output or arguments, a reasoning summary."""
    for key in ("content", "output", "summary", "arguments", "input"):
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
