"""pydantic-ai conversations on a transcript store.

Needs `pip install 'transcript-store[pydantic-ai]'`. The model here is pydantic-ai's "test"
model (answers offline); use "openai:…", "anthropic:…" or any other instead.

Run: python examples/pydantic_ai_conversation.py [STORE_URL]   (default: sqlite:///agents.db)
"""

from __future__ import annotations

import asyncio
import sys

from pydantic_ai import Agent
from pydantic_ai.conversation import Conversation

from transcripts.integrations.pydantic_ai import TranscriptConversationStore

agent = Agent("test")


async def main(url: str) -> None:
    with TranscriptConversationStore(url=url) as conversations:
        for prompt in ["Hello!", "What did I just say?"]:
            conversation = await conversations.load("chat-7") or Conversation(
                conversation_id="chat-7"
            )
            result = await agent.run(prompt, conversation=conversation)
            await conversations.save(result)  # the result: its compactions are recorded too
        loaded = await conversations.load("chat-7")
        print(f"{len(loaded.messages)} messages: two turns")
        store = conversations.store  # the TranscriptStore: the audit, search, history
        print([message["role"] for message in store.active("chat-7")])


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "sqlite:///agents.db"))
