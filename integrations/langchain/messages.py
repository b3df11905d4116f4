"""LangChain messages as stored messages, and back.

A message is stored as `{"id", "role", "content", tool-call facts, "langchain":
message_to_dict(msg) without its id}`: the role, the content and the facts (an AI message's
`tool_calls[].id`, a tool message's `tool_call_id`) are what the store searches and the
compaction contract checks; `langchain` is the message itself, so it comes back as it was.
A message keeps its id; one without gets a new one. A chunk (`AIMessageChunk`, … what a
streamed turn saves) is stored as its message class is: an `AIMessageChunk` as an assistant
message, with the tool calls its chunks make.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from uuid import uuid4

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
    message_to_dict,
    messages_from_dict,
)

KEY = "langchain"
# The role of each message class, and of its chunk class (AIMessageChunk is an AIMessage):
# what RunnableWithMessageHistory.stream() saves is chunks.
_ROLES = (
    (HumanMessage, "user"),
    (AIMessage, "assistant"),
    (SystemMessage, "system"),
    (ToolMessage, "tool"),
    (FunctionMessage, "function"),
)
_CHAT_ROLES = frozenset({"user", "assistant", "system", "developer"})
_PLAIN_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


def to_stored(message: BaseMessage, *, with_id: bool = True) -> dict[str, Any]:
    """The stored message of `message`: with its id (a new one if it has none), or with no
    id at all (a new message of a compaction's replacement)."""
    data = message_to_dict(message)
    data["data"] = {key: value for key, value in data["data"].items() if key != "id"}
    stored: dict[str, Any] = {"role": _role(message), "content": message.content}
    if isinstance(message, AIMessage) and (calls := _tool_calls(message)):
        stored["tool_calls"] = calls
    if isinstance(message, ToolMessage):
        stored["tool_call_id"] = message.tool_call_id
    stored[KEY] = data
    if with_id:
        stored["id"] = message.id or f"lc_{uuid4().hex}"
    return stored


def from_stored(stored: Mapping[str, Any]) -> BaseMessage:
    """The LangChain message a stored message holds, with the store's id; a message stored
    by other means is read as an OpenAI-style chat message."""
    data = stored.get(KEY)
    if isinstance(data, Mapping) and isinstance(data.get("data"), Mapping):
        return messages_from_dict([{**data, "data": {**data["data"], "id": stored["id"]}}])[0]
    plain = {key: stored[key] for key in _PLAIN_KEYS if key in stored}
    [message] = convert_to_messages([plain])
    message.id = stored["id"]
    return message


def _tool_calls(message: AIMessage) -> list[dict[str, Any]]:
    """The calls an AI message makes, OpenAI-style: those whose arguments parsed, and those
    whose arguments did not (`invalid_tool_calls`, kept as text), so that the compaction
    contract keeps every tool result with its call."""
    parsed = [(call["id"], call["name"], json.dumps(call["args"])) for call in message.tool_calls]
    invalid = [
        (call["id"], call["name"] or "", call["args"] or "") for call in message.invalid_tool_calls
    ]
    return [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        for call_id, name, arguments in [*parsed, *invalid]
        if call_id
    ]


def _role(message: BaseMessage) -> str:
    if isinstance(message, ChatMessage):
        return message.role if message.role in _CHAT_ROLES else "user"
    return next((role for kind, role in _ROLES if isinstance(message, kind)), "user")
