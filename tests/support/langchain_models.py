"""LangChain's own fake chat model for tests, able to sit in an agent (tools bound) and
keeping the messages of every call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult


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
