"""Child-process program for tests/frameworks/test_pydantic_ai_processes.py: one turn of a
pydantic-ai Agent (support/pydantic_agent.py) on a conversation loaded from a
TranscriptConversationStore opened here, saved back.

    python pydantic_turn.py URL CONVERSATION PROMPT

Prints one JSON line: the messages the model was sent in the turn's first request, and the
conversation as loaded after the save (both as `comparable` gives them).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: `support`

from parent import say  # noqa: E402
from pydantic_ai.models.function import FunctionModel  # noqa: E402

from support.pydantic_agent import agent, comparable, reply  # noqa: E402
from transcripts.integrations.pydantic_ai import TranscriptConversationStore  # noqa: E402


async def main(url: str, conversation_id: str, prompt: str) -> None:
    sent: list = []

    def recording(messages: list, info: object) -> object:
        sent.append(list(messages))
        return reply(messages, info)  # type: ignore[arg-type]

    with TranscriptConversationStore(url=url) as store:
        conversation = await store.load(conversation_id)
        assert conversation is not None, "the conversation is not in the store"
        result = await agent().run(
            prompt, conversation=conversation, model=FunctionModel(recording)
        )
        await store.save(result)
        loaded = await store.load(conversation_id)
    assert loaded is not None
    say({"sent": comparable(sent[0]), "loaded": comparable(loaded.messages)})


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
