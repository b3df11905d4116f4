"""LangChain's own fake chat model for tests, able to sit in an agent (tools bound) and
keeping the messages of every call."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult


class ScriptedChatModel(GenericFakeChatModel):
    """Answers with the given messages in turn (an exception is raised); `calls` holds
    each call's input messages."""

    calls: list[list[BaseMessage]] = []

    def __init__(self, answers: Sequence[AIMessage | str | Exception], **kwargs: Any) -> None:
        super().__init__(messages=iter(answers), calls=[], **kwargs)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.calls.append(list(messages))
        answer = next(self.messages)
        if isinstance(answer, Exception):
            raise answer
        message = answer if isinstance(answer, AIMessage) else AIMessage(content=answer)
        return ChatResult(generations=[ChatGeneration(message=message)])


class StreamingChatModel(ScriptedChatModel):
    """`ScriptedChatModel` streaming each answer as chat models stream: its text a token at a
    time, then each tool call in a chunk of its own (`tool_call_chunks`). Streamed, a turn
    ends as the chunks added up: an `AIMessageChunk`."""

    def _stream(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        message = self._generate(messages).generations[0].message
        assert isinstance(message, AIMessage) and isinstance(message.content, str)
        for token in re.split(r"(\s)", message.content):
            if token:
                yield ChatGenerationChunk(message=AIMessageChunk(content=token, id=message.id))
        for index, call in enumerate(message.tool_calls):
            part = {"name": call["name"], "args": json.dumps(call["args"]), "id": call["id"]}
            chunk = AIMessageChunk(
                content="", id=message.id, tool_call_chunks=[{**part, "index": index}]
            )
            yield ChatGenerationChunk(message=chunk)
