"""Framework integrations, imported as `transcripts.integrations.<framework>`.

Each adapts transcript-store to one agent framework's session or memory interface, through
the public API only, and is installed with the framework as an extra:

- `openai_agents` (`transcript-store[openai-agents]`): `TranscriptSession`, the OpenAI
  Agents SDK's `Session`.
- `langchain` (`transcript-store[langchain]`): `TranscriptChatMessageHistory`,
  `TranscriptMiddleware` and `TranscriptSummarizationMiddleware`.
- `pydantic_ai` (`transcript-store[pydantic-ai]`): `TranscriptConversationStore`,
  pydantic-ai's `ConversationStore`.
- `claude_agent_sdk` (`transcript-store[claude-agent-sdk]`): `TranscriptSessionStore`, the
  Claude Agent SDK's `SessionStore`.

Importing `transcripts` or this package imports no framework.
"""
