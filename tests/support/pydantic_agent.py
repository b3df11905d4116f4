"""A real pydantic-ai `Agent` for the tests: a `FunctionModel` (no network, no model) that
calls a tool on every prompt then answers, and a compaction capability of its own that
summarizes all but the last messages once the history grows past a size (the `compact_history`
hook, as pydantic-ai's summarizing capabilities are written).

Runs are deterministic but for what pydantic-ai stamps on messages (times, durations, run
ids): `comparable` leaves those out, to compare the conversations of two runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability, CompactionResult
from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

STAMPED = frozenset({"timestamp", "request_timestamp", "duration", "run_id"})


def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Look a prompt up with the tool, then answer saying how many messages it was sent."""
    last = messages[-1]
    prompts = [p for p in last.parts if isinstance(p, UserPromptPart)]
    if prompts:
        call_id = f"call-{len(messages)}"
        return ModelResponse(parts=[ToolCallPart("lookup", {"q": prompts[-1].content}, call_id)])
    return ModelResponse(parts=[TextPart(f"answered after {len(messages)} messages")])


@dataclass
class Summarizing(AbstractCapability[Any]):
    """Summarizes every message but the last `keep` once the history holds more than `after`
    (and whenever a run asks with `compact=`); `fail` makes it raise instead."""

    after: int = 8
    keep: int = 2
    fail: bool = False
    id: str | None = "summarizing"

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        if len(ctx.messages) > self.after:
            ctx.request_compaction(reason="threshold")
        return request_context

    async def compact_history(self, ctx: Any, request: Any) -> CompactionResult | None:
        if self.fail:
            raise RuntimeError("the summarizer is down")
        messages = request.messages
        tail = messages[-self.keep :]
        first = messages[0]
        system = [p for p in first.parts if isinstance(p, SystemPromptPart)]
        part = CompactionPart(content=f"summary of {len(messages) - len(tail)} messages")
        return CompactionResult(
            messages=[ModelRequest(parts=[*system, part]), *tail],
            part=part,
            handler="summarizing",
            kept_from=1,
            metadata={"kept": len(tail)},
        )


def agent(**summarizing: Any) -> Agent[None, str]:
    """The agent: instructions, the `lookup` tool, the model above and `Summarizing`."""
    made: Agent[None, str] = Agent(
        FunctionModel(reply),
        system_prompt="Answer briefly.",
        capabilities=[Summarizing(**summarizing)],
    )

    @made.tool_plain
    def lookup(q: str) -> str:
        return f"found {q}"

    return made


def comparable(messages: list[ModelMessage]) -> list[Any]:
    """The messages as JSON without what each run stamps on them (times, run ids)."""
    return _without_stamps(ModelMessagesTypeAdapter.dump_python(messages, mode="json"))


def _without_stamps(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_stamps(v) for k, v in value.items() if k not in STAMPED}
    if isinstance(value, list):
        return [_without_stamps(item) for item in value]
    return value
