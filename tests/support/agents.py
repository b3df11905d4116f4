"""The OpenAI Agents SDK's real loop for tests: its own scripted model, a tool, a
`responses.compact` endpoint that answers without a network, and a short way to run a turn."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from types import SimpleNamespace
from typing import Any, TypeVar

from agents import Agent, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

T = TypeVar("T")


@function_tool
def forecast(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def agent(model: ScriptedModel) -> Agent:
    return Agent(name="assistant", model=model, tools=[forecast])


def script_tool_turn(model: ScriptedModel, city: str, call_id: str, answer: str) -> None:
    """The model calls `forecast(city)`, then answers."""
    model.enqueue([function_call("forecast", {"city": city}, call_id=call_id)])
    model.enqueue([assistant_message(answer)])


async def turn(model: ScriptedModel, text: str, answer: str, **options: Any) -> Any:
    """One run of the Runner: the model answers `text` with `answer`."""
    model.enqueue([assistant_message(answer)])
    return await Runner.run(agent(model), text, **options)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


class CompactEndpoint:
    """The `client.responses.compact` of an OpenAI client, answered here: `output` items,
    or `error` raised. Each call's keyword arguments are kept in `calls`."""

    def __init__(self, output: list[dict[str, Any]] | None = None, error: Exception | None = None):
        self.output = output or []
        self.error = error
        self.calls: list[dict[str, Any]] = []
        self.responses = self

    async def compact(self, **arguments: Any) -> SimpleNamespace:
        self.calls.append(arguments)
        if self.error is not None:
            raise self.error
        return SimpleNamespace(output=list(self.output), usage=None)
