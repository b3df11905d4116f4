"""The OpenAI Agents SDK on a transcript store: `pip install 'transcript-store[openai-agents]'`.

from agents import Agent, Runner
from transcripts.integrations.openai_agents import TranscriptSession

session = TranscriptSession("user-42", url="sqlite:///agents.db")
result = await Runner.run(Agent(name="assistant"), "Hello", session=session)
"""

from .session import TranscriptSession

__all__ = ["TranscriptSession"]
