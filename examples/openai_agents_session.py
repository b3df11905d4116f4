"""The OpenAI Agents SDK with a transcript store as its session.

Needs `pip install 'transcript-store[openai-agents]'`. The model here is the SDK's own
`ScriptedModel` (no network, no key); use any model the SDK takes instead.

Run: python examples/openai_agents_session.py [STORE_URL]   (default: sqlite:///agents.db)
"""

from __future__ import annotations

import asyncio
import sys

from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message

from transcripts.integrations.openai_agents import TranscriptSession


async def main(url: str) -> None:
    set_tracing_disabled(True)  # no trace export: this example calls no service
    model = ScriptedModel()
    agent = Agent(name="Assistant", instructions="Reply very concisely.", model=model)
    session = TranscriptSession("user-42", url=url)
    try:
        model.enqueue([assistant_message("San Francisco.")])
        await Runner.run(agent, "What city is the Golden Gate Bridge in?", session=session)
        model.enqueue([assistant_message("California.")])
        result = await Runner.run(agent, "What state is it in?", session=session)
        print(result.final_output)
        items = await session.get_items()
        print(f"{len(items)} items in the context: the second turn was given the first")
        popped = await session.pop_item()  # a rewind: out of the context, kept in the history
        print(f"popped: {popped['content'][0]['text']}")
    finally:
        session.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "sqlite:///agents.db"))
