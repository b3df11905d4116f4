"""A pydantic-ai run in another process, on a TranscriptConversationStore of its own,
continues the conversation runs of this process left in the store: its model is sent what
a run on pydantic-ai's in-memory store holding the same conversation is sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import ConversationStore, InMemoryConversationStore
from pydantic_ai.models.function import FunctionModel

from support.processes import Child, program
from support.pydantic_agent import agent, comparable, reply
from transcripts.integrations.pydantic_ai import TranscriptConversationStore

pytestmark = pytest.mark.slow

PROMPTS = ["My name is Ada.", "I live in Lisbon.", "I like trams.", "And fado."]


async def turns(store: ConversationStore, prompts: list[str]) -> None:
    for prompt in prompts:
        conversation = await store.load("chat") or Conversation(conversation_id="chat")
        await store.save(await agent().run(prompt, conversation=conversation))


async def sent_in_a_turn(store: ConversationStore, prompt: str) -> list:
    sent: list = []

    def recording(messages: list, info: object) -> object:
        sent.append(list(messages))
        return reply(messages, info)  # type: ignore[arg-type]

    conversation = await store.load("chat")
    result = await agent().run(prompt, conversation=conversation, model=FunctionModel(recording))
    await store.save(result)
    return comparable(sent[0])


def test_a_run_in_a_new_process_continues_the_conversation_from_the_store(
    store_url: str, tmp_path: Path
) -> None:
    with TranscriptConversationStore(url=store_url) as ours:
        asyncio.run(turns(ours, PROMPTS))  # with a compaction: the history passed 8 messages
        assert ours.store.compactions("chat")

    child = Child(
        tmp_path, "pydantic-turn", program("pydantic_turn.py", store_url, "chat", "My name?")
    )
    try:
        result = child.result()
    finally:
        child.stop()

    theirs = InMemoryConversationStore()
    asyncio.run(turns(theirs, PROMPTS))
    assert result["sent"] == asyncio.run(sent_in_a_turn(theirs, "My name?"))
    their_conversation = asyncio.run(theirs.load("chat"))
    assert their_conversation is not None
    assert result["loaded"] == comparable(their_conversation.messages)
    with TranscriptConversationStore(url=store_url) as again:
        reloaded = asyncio.run(again.load("chat"))
        assert reloaded is not None and comparable(reloaded.messages) == result["loaded"]
        assert again.store.verify_projections().ok
