"""A message in full, as lines for people: its role, every part of its content, its tool
calls with their arguments, the call a tool result answers, any other field as JSON.
Nothing is cut; the caller prints it inert (`inert.echo`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

INDENT = "  "
SHOWN = ("id", "role", "content", "tool_calls", "tool_call_id")


def message_lines(message: dict[str, Any], *, header: bool = True) -> Iterator[str]:
    """`message` (as stored, or a proposed one) line by line; without `header`, neither
    its role and id nor the call it answers (the caller says them)."""
    if set(message) == {"unreadable"}:  # a proposed item that was no message
        yield f"not a message: {message['unreadable']}"
        return
    if header:
        yield f"role: {message.get('role')}" + (f" (id {message['id']})" if "id" in message else "")
    yield from _content(message.get("content"))
    for call in message.get("tool_calls") or []:
        yield from _call(call)
    if header and "tool_call_id" in message:
        yield f"answers tool call: {message['tool_call_id']}"
    for key, value in message.items():
        if key not in SHOWN:
            yield f"{key}: {_json(value)}"


def _content(content: object) -> Iterator[str]:
    if content is None:
        yield "content: none"
    elif isinstance(content, str):
        yield "content:"
        yield from _indented(content)
    elif isinstance(content, list):
        yield f"content: {len(content)} part{'' if len(content) == 1 else 's'}"
        for number, part in enumerate(content, 1):
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                others = {key: value for key, value in part.items() if key != "text"}
                yield f"{INDENT}[{number}] {part.get('type', 'text')}" + (
                    f" {_json(others)}" if set(others) - {"type"} else ""
                )
                yield from _indented(part["text"], 2)
            else:
                yield f"{INDENT}[{number}] {_json(part)}"
    else:
        yield f"content: {_json(content)}"


def _call(call: object) -> Iterator[str]:
    if not isinstance(call, dict):
        yield f"tool call: {_json(call)}"
        return
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    yield f"tool call {call.get('id')}: {function.get('name', '?')}"
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            yield from _indented(arguments)
            return
    yield from _indented(_json(arguments, indent=True))


def _indented(text: str, depth: int = 1) -> Iterator[str]:
    for line in text.split("\n"):
        yield INDENT * depth + line


def _json(value: object, *, indent: bool = False) -> str:
    option = orjson.OPT_INDENT_2 if indent else 0
    try:
        return orjson.dumps(value, option=option).decode()
    except TypeError:
        return repr(value)
