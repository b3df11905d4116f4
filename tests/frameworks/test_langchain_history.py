"""TranscriptChatMessageHistory under LangChain's RunnableWithMessageHistory, with
LangChain's own fake chat model, sync and async."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from support.langchain_models import ScriptedChatModel
from transcripts import TranscriptStore
from transcripts.integrations.langchain import TranscriptChatMessageHistory

# Deprecated in LangChain 1 in favour of LangGraph's persistence (the middleware), not gone.
pytestmark = pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")

SESSION = "chat-1"
PROMPT = ChatPromptTemplate.from_messages(
    [("system", "Be brief."), MessagesPlaceholder("history"), ("human", "{question}")]
)


def chat(store: TranscriptStore, model: ScriptedChatModel) -> RunnableWithMessageHistory:
    return RunnableWithMessageHistory(
        PROMPT | model,
        lambda session_id: TranscriptChatMessageHistory(session_id, store),
        input_messages_key="question",
        history_messages_key="history",
    )


def contents(messages: list) -> list[str]:
    return [message.content for message in messages]


def test_a_conversation_is_stored_once_and_given_back_as_history(store: TranscriptStore) -> None:
    model = ScriptedChatModel(["Paris.", "About 2 million."])
    runnable = chat(store, model)
    config = {"configurable": {"session_id": SESSION}}
    runnable.invoke({"question": "Capital of France?"}, config)
    runnable.invoke({"question": "Population?"}, config)

    history = TranscriptChatMessageHistory(SESSION, store).messages
    assert contents(history) == ["Capital of France?", "Paris.", "Population?", "About 2 million."]
    assert contents(model.calls[-1]) == ["Be brief.", *contents(history[:3])]
    assert [message["id"] for message in store.active(SESSION)] == [m.id for m in history]
    assert len(store.history(SESSION)) == 4
    assert store.sessions()[0]["source"] == "langchain"


def test_the_async_path_stores_and_reads_the_same(store: TranscriptStore) -> None:
    model = ScriptedChatModel(["One.", "Two."])
    runnable = chat(store, model)
    config = {"configurable": {"session_id": SESSION}}

    async def two_turns() -> None:
        await runnable.ainvoke({"question": "First?"}, config)
        await runnable.ainvoke({"question": "Second?"}, config)

    asyncio.run(two_turns())
    history = asyncio.run(TranscriptChatMessageHistory(SESSION, store).aget_messages())
    assert contents(history) == ["First?", "One.", "Second?", "Two."]
    assert contents(model.calls[-1])[1:] == ["First?", "One.", "Second?"]


def test_a_message_keeps_its_id_and_comes_back_as_it_was(store: TranscriptStore) -> None:
    history = TranscriptChatMessageHistory(SESSION, store)
    call = AIMessage(
        "", id="ai-1", tool_calls=[{"id": "call_1", "name": "lookup", "args": {"q": "x"}}]
    )
    result = ToolMessage("found", tool_call_id="call_1", id="tool-1")
    history.add_messages([HumanMessage("look it up"), call, result])
    history.add_messages([call, result])  # again: stored once

    [question, *stored] = history.messages
    assert question.id and question.id.startswith("lc_")
    assert stored == [call, result]
    assert len(store.history(SESSION)) == 3
    assert store.active(SESSION)[1]["tool_calls"][0]["id"] == "call_1"
    assert store.active(SESSION)[2]["tool_call_id"] == "call_1"


def test_clear_rewinds_every_message_keeps_the_history_and_the_chat_goes_on(
    store: TranscriptStore,
) -> None:
    model = ScriptedChatModel(["Hi.", "Fresh start."])
    runnable = chat(store, model)
    config = {"configurable": {"session_id": SESSION}}
    runnable.invoke({"question": "Hello"}, config)

    TranscriptChatMessageHistory(SESSION, store).clear()
    assert TranscriptChatMessageHistory(SESSION, store).messages == []
    assert [entry["rewound"] for entry in store.history(SESSION)] == [True, True]

    runnable.invoke({"question": "New topic"}, config)
    assert contents(model.calls[-1]) == ["Be brief.", "New topic"]
    asyncio.run(TranscriptChatMessageHistory(SESSION, store).aclear())
    assert len(store.history(SESSION)) == 4 and store.active(SESSION) == []
