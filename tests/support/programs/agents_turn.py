"""Child-process program for tests/frameworks/test_agents_processes.py: one turn of the
OpenAI Agents SDK's Runner on a TranscriptSession of a store opened here.

    python agents_turn.py URL SESSION TEXT ANSWER

Prints one JSON line: the input the model was given and the session's items afterwards.
"""

from __future__ import annotations

import asyncio
import sys

from agents import Agent, Runner
from agents.testing import ScriptedModel, assistant_message
from parent import say

from transcripts.integrations.openai_agents import TranscriptSession


async def main(url: str, session_id: str, text: str, answer: str) -> None:
    session = TranscriptSession(session_id, url=url)
    model = ScriptedModel([[assistant_message(answer)]])
    await Runner.run(Agent(name="assistant", model=model), text, session=session)
    say({"input": model.calls[-1].input, "items": await session.get_items()})
    session.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
