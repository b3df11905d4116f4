"""A LangChain v1 agent (`create_agent`, LangGraph underneath) with TranscriptMiddleware
and TranscriptSummarizationMiddleware, driven by LangChain's own fake chat model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.exceptions import ModelError
from langchain_core.messages import AIMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.checkpoint.memory import InMemorySaver

from support.langchain_models import ScriptedChatModel
from transcripts import TranscriptStore
from transcripts.integrations.langchain import (
    TranscriptMiddleware,
    TranscriptSummarizationMiddleware,
)

THREAD = "thread-1"
CONFIG = {"configurable": {"thread_id": THREAD}}


def lookup(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def calls_lookup(city: str, call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"id": call_id, "name": "lookup", "args": {"city": city}}])


def agent(store: TranscriptStore, model: ScriptedChatModel, *middleware: Any) -> Any:
    return create_agent(
        model,
        tools=[lookup],
        middleware=[TranscriptMiddleware(store), *middleware],
        checkpointer=InMemorySaver(),
    )


def as_stored(store: TranscriptStore) -> list[tuple[str, Any]]:
    return [(message["id"], message["content"]) for message in store.active(THREAD)]


def as_state(messages: list) -> list[tuple[str, Any]]:
    return [(message.id, message.content) for message in messages]


def test_the_agent_s_messages_are_mirrored_once_whatever_the_steps(store: TranscriptStore) -> None:
    model = ScriptedChatModel([calls_lookup("Paris", "call_1"), "Sunny.", "You're welcome."])
    graph = agent(store, model)
    graph.invoke({"messages": [{"role": "user", "content": "Weather in Paris?"}]}, CONFIG)
    state = graph.invoke({"messages": [{"role": "user", "content": "Thanks"}]}, CONFIG)

    assert as_stored(store) == as_state(state["messages"])
    assert len(store.history(THREAD)) == len(state["messages"]) == 6
    roles = [message["role"] for message in store.active(THREAD)]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert store.active(THREAD)[2]["tool_call_id"] == "call_1"
    assert store.sessions()[0]["source"] == "langgraph"


def test_the_async_agent_is_mirrored_the_same(store: TranscriptStore) -> None:
    model = ScriptedChatModel([calls_lookup("Oslo", "call_2"), "Cold."])
    graph = agent(store, model)
    state = asyncio.run(
        graph.ainvoke({"messages": [{"role": "user", "content": "Weather in Oslo?"}]}, CONFIG)
    )

    assert as_stored(store) == as_state(state["messages"])
    assert len(store.history(THREAD)) == 4


def summarizing(store: TranscriptStore, summary_model: ScriptedChatModel) -> Any:
    return TranscriptSummarizationMiddleware(
        summary_model, store=store, trigger=("messages", 5), keep=("messages", 2)
    )


def test_a_summary_is_one_committed_compaction_of_the_summarised_messages(
    store: TranscriptStore,
) -> None:
    model = ScriptedChatModel([calls_lookup("Rome", "call_3"), "Warm.", "Pasta."])
    summary_model = ScriptedChatModel(["The user asked about Rome's weather: warm."])
    graph = agent(store, model, summarizing(store, summary_model))
    first = graph.invoke({"messages": [{"role": "user", "content": "Weather in Rome?"}]}, CONFIG)
    state = graph.invoke({"messages": [{"role": "user", "content": "What to eat?"}]}, CONFIG)

    [compaction] = store.compactions(THREAD)
    assert compaction["status"] == "committed"
    # LangChain's cut-off keeps the last two messages and the AI/tool pairs together.
    assert compaction["superseded"] == [message.id for message in first["messages"][:3]]
    [summary_id] = compaction["added"]
    assert as_stored(store) == as_state(state["messages"])
    assert state["messages"][0].id == summary_id
    assert "Rome's weather" in state["messages"][0].content
    assert model.calls[-1][0].id == summary_id  # the model was given the summary
    assert len(store.history(THREAD)) == 7  # the summarised messages kept, superseded
    # The tokens by the middleware's counter: the snapshot, then the summary and the rest.
    snapshot = [*first["messages"], state["messages"][2]]
    assert compaction["tokens_before"] == count_tokens_approximately(snapshot)
    assert compaction["tokens_after"] == count_tokens_approximately(state["messages"][:3])


def test_a_failing_summary_is_recorded_and_the_agent_goes_on_with_its_messages(
    store: TranscriptStore,
) -> None:
    model = ScriptedChatModel([calls_lookup("Rome", "call_4"), "Warm.", "Pasta."])
    failing = ScriptedChatModel([ModelError("the summary model is down")])
    graph = agent(store, model, summarizing(store, failing))
    first = graph.invoke({"messages": [{"role": "user", "content": "Weather in Rome?"}]}, CONFIG)
    state = graph.invoke({"messages": [{"role": "user", "content": "What to eat?"}]}, CONFIG)

    assert state["messages"][-1].content == "Pasta."
    assert as_state(state["messages"][:4]) == as_state(first["messages"])
    [failure] = store.compactions(THREAD)
    assert (failure["status"], failure["failure"]) == ("failed", "summarize_error")
    assert "the summary model is down" in failure["error"]
    assert failure["superseded"] == [message.id for message in first["messages"][:3]]
    assert as_stored(store) == as_state(state["messages"])
    assert failure["tokens_before"] == count_tokens_approximately(state["messages"][:5])
    attempted = store.compaction(THREAD, failure["id"])
    assert attempted["proposed"] is None  # the summary model raised: nothing was proposed
    assert "the summary model is down" in attempted["exception"]["message"]


def test_the_async_summary_commits_the_same_way(store: TranscriptStore) -> None:
    model = ScriptedChatModel([calls_lookup("Rome", "call_5"), "Warm.", "Pasta."])
    graph = agent(store, model, summarizing(store, ScriptedChatModel(["Rome: warm."])))

    async def two_turns() -> dict:
        await graph.ainvoke({"messages": [{"role": "user", "content": "Rome?"}]}, CONFIG)
        return await graph.ainvoke({"messages": [{"role": "user", "content": "Food?"}]}, CONFIG)

    state = asyncio.run(two_turns())
    assert store.compactions(THREAD)[0]["status"] == "committed"
    assert as_stored(store) == as_state(state["messages"])


def test_an_agent_without_a_thread_id_is_told_to_give_one(store: TranscriptStore) -> None:
    graph = create_agent(ScriptedChatModel(["Hi."]), middleware=[TranscriptMiddleware(store)])

    with pytest.raises(ValueError, match="thread_id"):
        graph.invoke({"messages": [{"role": "user", "content": "Hello"}]})
