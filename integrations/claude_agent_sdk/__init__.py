"""The Claude Agent SDK on a transcript store: `pip install 'transcript-store[claude-agent-sdk]'`.

from claude_agent_sdk import ClaudeAgentOptions, query
from transcripts.integrations.claude_agent_sdk import TranscriptSessionStore

store = TranscriptSessionStore(url="sqlite:///agents.db")
options = ClaudeAgentOptions(session_store=store)
async for message in query(prompt="Hello", options=options):
    ...
"""

from .store import TranscriptSessionStore

__all__ = ["TranscriptSessionStore"]
