"""Message chunks — what `RunnableWithMessageHistory.stream()` saves — are stored as the
messages they add up to: an `AIMessageChunk` as an assistant message with the tool calls its
chunks make, a `ToolMessageChunk` as a tool message answering its call, every other chunk
class with the role of its message class (they were all stored with role `user`, their tool
calls unseen, so a compaction orphaning a tool result committed). Streamed with LangChain's
fake chat model, streaming as chat models do."""

from __future__ import annotations

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessageChunk,
    FunctionMessageChunk,
    HumanMessageChunk,
    SystemMessageChunk,
    ToolMessageChunk,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from support.langchain_models import StreamingChatModel
from transcripts import TranscriptStore
from transcripts.integrations.langchain import TranscriptChatMessageHistory

pytestmark = pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")

SESSION = "streamed"
PROMPT = ChatPromptTemplate.from_messages(
    [("system", "Be brief."), MessagesPlaceholder("history"), ("human", "{question}")]
)
LOOKUP = AIMessage(
    "Let me look.", tool_calls=[{"id": "call_7", "name": "lookup", "args": {"city": "Lisbon"}}]
)


def streamed(store: TranscriptStore, model: StreamingChatModel, question: str) -> list[str]:
    """One turn streamed through RunnableWithMessageHistory; the tokens it streamed."""
    chat = RunnableWithMessageHistory(
        PROMPT | model,
        lambda session_id: TranscriptChatMessageHistory(session_id, store),
        input_messages_key="question",
        history_messages_key="history",
    )
    config = {"configurable": {"session_id": SESSION}}
    return [chunk.content for chunk in chat.stream({"question": question}, config)]


def test_a_streamed_turn_is_stored_as_an_assistant_message_with_its_tool_calls(
    store: TranscriptStore,
) -> None:
    tokens = streamed(store, StreamingChatModel([LOOKUP]), "Weather in Lisbon?")
    assert "".join(tokens) == "Let me look."
    [question, answer] = store.active(SESSION)
    assert (question["role"], answer["role"]) == ("user", "assistant")
    assert answer["langchain"]["type"] == "AIMessageChunk"  # what the stream saved
    assert [call["id"] for call in answer["tool_calls"]] == ["call_7"]
    [_, again] = TranscriptChatMessageHistory(SESSION, store).messages
    assert isinstance(again, AIMessageChunk) and again.tool_calls[0]["args"] == {"city": "Lisbon"}


def test_a_compaction_that_would_orphan_a_streamed_calls_result_is_refused(
    store: TranscriptStore,
) -> None:
    streamed(store, StreamingChatModel([LOOKUP]), "Weather in Lisbon?")
    history = TranscriptChatMessageHistory(SESSION, store)
    history.add_messages([ToolMessageChunk(content="17°C", tool_call_id="call_7")])
    question, call, result = store.active(SESSION)
    assert (result["role"], result["tool_call_id"]) == ("tool", "call_7")
    attempt = store.begin_compaction(SESSION)
    outcome = store.commit_compaction(
        attempt, [{"role": "system", "content": "asked about Lisbon"}, result]
    )
    assert (outcome.committed, outcome.failure) == (False, "orphaned_tool_result")
    assert store.active(SESSION) == [question, call, result]


@pytest.mark.parametrize(
    ("chunk", "role"),
    [
        (HumanMessageChunk(content="hi"), "user"),
        (AIMessageChunk(content="hello"), "assistant"),
        (SystemMessageChunk(content="be brief"), "system"),
        (ToolMessageChunk(content="42", tool_call_id="call_1"), "tool"),
        (FunctionMessageChunk(content="42", name="answer"), "function"),
        (ChatMessageChunk(content="note", role="developer"), "developer"),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, BaseMessage) else value,
)
def test_every_chunk_class_is_stored_with_the_role_of_its_message_class(
    store: TranscriptStore, chunk: BaseMessage, role: str
) -> None:
    history = TranscriptChatMessageHistory(SESSION, store)
    history.add_messages([chunk])
    [stored] = store.active(SESSION)
    assert stored["role"] == role
    [again] = history.messages
    assert type(again) is type(chunk) and again.content == chunk.content
