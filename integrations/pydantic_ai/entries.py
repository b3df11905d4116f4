"""pydantic-ai's conversation entries as stored messages, and back.

One entry is one message, stored under the entry's id: `{"role": R, "content": text,
"pydantic_ai": {"parent_id": …, "kind": "message", "message": <the ModelMessage as JSON>}}`.
The role and the text are what the store shows and full-text search indexes; the message
comes back exactly as it was saved (through pydantic-ai's own `ModelMessagesTypeAdapter`).
The entry before it (`parent_id`) is part of the stored message, as it is part of what an
entry is.

A message read back or saved knows the id of its entry (`mark`, `entry_id`), so that a
compaction a run makes of it can be told in entries (`compactions`). The id is kept in the
object's `__dict__`, beside its fields: pydantic-ai never compares, copies or serializes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson
from pydantic_ai.conversation_store import ConversationEntry
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse

KEY = "pydantic_ai"
_ENTRY_ID = "_transcripts_entry_id"  # kept beside a read message's fields, never compared
_SYSTEM_PARTS = frozenset({"system-prompt"})
_TOOL_PARTS = frozenset({"tool-return", "retry-prompt", "retry-feedback"})


def stored_message(entry: ConversationEntry) -> dict[str, Any]:
    """The message that stores an entry, with its id."""
    dumped = message_json(entry.message)
    return {
        "id": entry.id,
        "role": _role(entry.message, dumped),
        "content": "\n".join(_texts(dumped)),
        KEY: {"parent_id": entry.parent_id, "kind": entry.kind, "message": dumped},
    }


def message_json(message: ModelMessage) -> dict[str, Any]:
    """A message as JSON, as pydantic-ai serializes it."""
    return ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]  # type: ignore[no-any-return]


def is_entry(message: Mapping[str, Any]) -> bool:
    """Whether a stored message holds an entry (the integration stored it)."""
    stored = message.get(KEY)
    return isinstance(stored, dict) and "message" in stored


def parent_of(message: Mapping[str, Any]) -> str | None:
    """The id of the entry before a stored entry's."""
    return message[KEY]["parent_id"]  # type: ignore[no-any-return]


def entries_of(messages: Sequence[Mapping[str, Any]]) -> list[ConversationEntry]:
    """The entries stored messages hold (validated together: faster than one by one); each
    message knows its entry's id (`entry_id`)."""
    stored = [message[KEY] for message in messages]
    models = ModelMessagesTypeAdapter.validate_python([entry["message"] for entry in stored])
    entries = [
        ConversationEntry(
            id=message["id"], parent_id=entry["parent_id"], message=model, kind=entry["kind"]
        )
        for message, entry, model in zip(messages, stored, models, strict=True)
    ]
    for entry in entries:
        mark(entry)
    return entries


def mark(entry: ConversationEntry) -> None:
    """Make the entry's message, and each of its parts, know the entry's id: a message a run
    merged from stored ones (a request and the one after it) holds their parts."""
    for item in (entry.message, *entry.message.parts):
        if hasattr(item, "__dict__"):
            vars(item)[_ENTRY_ID] = entry.id


def entry_id(message: ModelMessage) -> str | None:
    """The id of the entry a message was read from or saved as, if it is that very object."""
    return vars(message).get(_ENTRY_ID)


def part_entry_ids(message: ModelMessage) -> list[str]:
    """The entries whose parts a message holds, in order: a request a run merged from a
    stored one and the one after it stands for both."""
    owners = (getattr(part, _ENTRY_ID, None) for part in message.parts)
    return list(dict.fromkeys(owner for owner in owners if owner is not None))


def _role(message: ModelMessage, dumped: Mapping[str, Any]) -> str:
    if isinstance(message, ModelResponse):
        return "assistant"
    kinds = {part.get("part_kind") for part in dumped.get("parts", [])}
    if kinds and kinds <= _SYSTEM_PARTS:
        return "system"
    if kinds and kinds <= _TOOL_PARTS:
        return "tool"
    return "user"


def _texts(dumped: Mapping[str, Any]) -> Iterable[str]:
    """The text of each part: what a reader sees and search finds."""
    for part in dumped.get("parts", []):
        if "tool_name" in part and "args" in part:  # a tool call
            args = part["args"]
            yield f"{part['tool_name']}({args if isinstance(args, str) else _json(args)})"
            continue
        content = part.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            yield from (item for item in content if isinstance(item, str))
        elif content is not None:
            yield _json(content)


def _json(value: object) -> str:
    return orjson.dumps(value).decode()
