"""A TranscriptSession in another process, on a store object of its own, continues the
history an Agents SDK run left in the store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agents.testing import ScriptedModel

from support.agents import turn
from support.processes import Child, program
from transcripts import TranscriptStore
from transcripts.integrations.openai_agents import TranscriptSession

pytestmark = pytest.mark.slow


def test_a_new_store_object_in_another_process_continues_the_history(
    store_url: str, tmp_path: Path
) -> None:
    session = TranscriptSession("shared", url=store_url)
    asyncio.run(turn(ScriptedModel(), "My name is Ada.", "Hello Ada.", session=session))
    before = asyncio.run(session.get_items())
    session.close()

    child = Child(
        tmp_path,
        "agents-turn",
        program("agents_turn.py", store_url, "shared", "What is my name?", "Ada."),
    )
    try:
        result = child.result()
    finally:
        child.stop()

    assert result["input"] == [*before, {"role": "user", "content": "What is my name?"}]
    assert result["items"][:2] == before
    assert [item.get("content") for item in result["items"]][2] == "What is my name?"
    with TranscriptStore.open(store_url) as store:
        active = store.active("shared")
        assert [message["openai_agents"]["item"] for message in active] == result["items"]
        assert len({message["id"] for message in active}) == len(store.history("shared")) == 4
