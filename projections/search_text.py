"""The text full-text search finds a message by, the same on every backend.

It is the message's `content` (a string; or of a list of parts, each string part and each
part's `text`), its tool calls' names and arguments (`tool_calls` given as a list of calls,
one call, or strings; a call's `function.name` / `function.arguments`, or its own `name` /
`arguments`), and its `reasoning`. Any other shape adds nothing and fails nothing: every
message `append` accepts has a text (perhaps empty), so the search index can always take it.
NUL, which PostgreSQL text cannot hold, becomes a space.

A change of this text is a new view version of `message_history`: SQLite's index keeps no
copy of it, and deletes an entry by the words this gives for its row again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any


def search_text(message: Mapping[str, Any]) -> str:
    """The words of a message, for the search index."""
    content = message.get("content")
    if isinstance(content, str) and "tool_calls" not in message and "reasoning" not in message:
        return content.replace("\x00", " ")  # the usual message, at once
    text = " ".join(
        part
        for part in (
            *_content(content),
            *_calls(message.get("tool_calls")),
            *_strings(message.get("reasoning")),
        )
        if part
    )
    return text.replace("\x00", " ")


def _content(content: object) -> Iterator[str]:
    parts = content if isinstance(content, list) else [content]
    for part in parts:
        if isinstance(part, str):
            yield part
        elif isinstance(part, Mapping):
            yield from _strings(part.get("text"))


def _calls(tool_calls: object) -> Iterator[str]:
    calls = tool_calls if isinstance(tool_calls, list) else [tool_calls]
    for call in calls:
        if isinstance(call, str):
            yield call
        elif isinstance(call, Mapping):
            function = call.get("function")
            for named in (function, call) if isinstance(function, Mapping) else (call,):
                yield from _strings(named.get("name"))
                yield from _arguments(named.get("arguments"))


def _arguments(arguments: object) -> Iterator[str]:
    if isinstance(arguments, str):
        yield arguments
    elif isinstance(arguments, (Mapping, list)):
        yield json.dumps(arguments, ensure_ascii=False)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
