"""A stored message as people read it: its content parts, tool calls with their arguments,
the call a tool result answers, the fields beside them — every value text, which the
templates escape. Nothing here is ever markup: an image part is named, never loaded (a
page must not fetch anything a message points at)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

SNIPPET = 160
SHOWN = 20_000  # characters of one text shown in a list; the message's own page shows all
KNOWN_KEYS = {"id", "role", "content", "tool_calls", "tool_call_id", "name"}


@dataclass(frozen=True)
class Part:
    kind: str  # "text", "image", "data" (any other part, as JSON)
    text: str
    cut: int = 0  # characters left out (see SHOWN)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # pretty-printed when it is JSON


@dataclass
class MessageView:
    id: str
    role: str
    name: str
    parts: tuple[Part, ...]
    tool_calls: tuple[ToolCall, ...]
    tool_call_id: str
    other: str  # the other fields, as JSON ("" when none)
    snippet: str
    answered_by: dict[str, str] = field(default_factory=dict)  # call id -> tool message id
    answers: str = ""  # the id of the message making the call this tool result answers

    @classmethod
    def of(cls, message: dict[str, Any], *, whole: bool = False) -> MessageView:
        limit = None if whole else SHOWN
        calls = message.get("tool_calls")
        return cls(
            id=str(message.get("id", "")),
            role=str(message.get("role", "")),
            name=_text(message.get("name")),
            parts=tuple(_parts(message.get("content"), limit)),
            tool_calls=tuple(_call(call) for call in calls) if isinstance(calls, list) else (),
            tool_call_id=_text(message.get("tool_call_id")),
            other=_json({k: v for k, v in message.items() if k not in KNOWN_KEYS}),
            snippet=snippet(message),
        )


def paired(messages: Sequence[dict[str, Any]], *, whole: bool = False) -> list[MessageView]:
    """The messages as views, each tool call linked to the tool result answering it in the
    same list, and each result to the message making its call."""
    views = [MessageView.of(message, whole=whole) for message in messages]
    calls = {call.id: view for view in views for call in view.tool_calls if call.id}
    for view in views:
        caller = calls.get(view.tool_call_id) if view.tool_call_id else None
        if caller is not None:
            caller.answered_by[view.tool_call_id] = view.id
            view.answers = caller.id
    return views


def snippet(message: dict[str, Any], length: int = SNIPPET) -> str:
    """A one-line preview: the text of its content, else the tools it calls."""
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    text = " ".join(str(content or "").split())
    if not text and isinstance(message.get("tool_calls"), list):
        text = "calls " + ", ".join(_call(call).name for call in message["tool_calls"])
    return text if len(text) <= length else text[: length - 1] + "…"


def _parts(content: Any, limit: int | None) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [_cut("text", content, limit)]
    if not isinstance(content, list):
        return [_cut("data", _json(content), limit)]
    parts = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in {"text", "input_text", "output_text"} and isinstance(part.get("text"), str):
            parts.append(_cut("text", part["text"], limit))
        elif kind in {"image_url", "input_image", "image"}:
            parts.append(Part("image", _image(part)))
        else:
            parts.append(_cut("data", _json(part), limit))
    return parts


def _image(part: dict[str, Any]) -> str:
    """An image part named by where it is, never shown: a data URL by its type and size."""
    source = part.get("image_url", part.get("url", part.get("source")))
    url = source.get("url") if isinstance(source, dict) else source
    if isinstance(url, str) and url.startswith("data:"):
        kind = url[5:].split(";", 1)[0].split(",", 1)[0] or "data"
        return f"image ({kind}, {len(url):,} characters inline)"
    return f"image: {url}" if isinstance(url, str) else f"image: {_json(part)}"


def _call(call: Any) -> ToolCall:
    if not isinstance(call, dict):
        return ToolCall("", "?", _json(call))
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    arguments = function.get("arguments", call.get("arguments", call.get("input", "")))
    if isinstance(arguments, str):
        try:
            arguments = _json(orjson.loads(arguments))
        except orjson.JSONDecodeError:
            pass
    else:
        arguments = _json(arguments)
    name = function.get("name", call.get("name", "?"))
    return ToolCall(_text(call.get("id")), _text(name) or "?", arguments)


def _cut(kind: str, text: str, limit: int | None) -> Part:
    if limit is None or len(text) <= limit:
        return Part(kind, text)
    return Part(kind, text[:limit], len(text) - limit)


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else _json(value)


def _json(value: Any) -> str:
    if value == {} or value is None:
        return ""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
