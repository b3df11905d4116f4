"""pydantic-ai on a transcript store: `pip install 'transcript-store[pydantic-ai]'`.

from pydantic_ai import Agent
from transcripts.integrations.pydantic_ai import TranscriptConversationStore

store = TranscriptConversationStore(url="sqlite:///agents.db")
conversation = await store.load("chat-7") or Conversation(conversation_id="chat-7")
result = await agent.run("Hello", conversation=conversation)
await store.save(result)
"""

from .store import TranscriptConversationStore

__all__ = ["TranscriptConversationStore"]
