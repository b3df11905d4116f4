"""`pop_item` never raises for a session the Agents SDK can use (issue 36). Two
pop-then-add-back pairs interleaving — in tasks, or in processes — used to leave a function
call output before its call, and every later `pop_item` raised. Now a popped output added
back restores the call it answers with it, in front of it, when that call was popped too:
the pair restores together."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from support.processes import Child, program, release_together
from transcripts import TranscriptStore
from transcripts.integrations.openai_agents import TranscriptSession

S = "pops"


def pair(call_id: str) -> list[dict[str, Any]]:
    """A function call and its output, as the SDK adds them."""
    return [
        {"type": "function_call", "call_id": call_id, "name": "forecast", "arguments": "{}"},
        {"type": "function_call_output", "call_id": call_id, "output": f"sunny {call_id}"},
    ]


def answer(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


def calls_come_first(items: list[dict[str, Any]]) -> bool:
    """Whether every function call output comes after the call it answers."""
    made: set[str] = set()
    for item in items:
        if item.get("type") == "function_call":
            made.add(item["call_id"])
        elif item.get("type") == "function_call_output" and item["call_id"] not in made:
            return False
    return True


def canonical(items: list[dict[str, Any]]) -> Counter[str]:
    return Counter(json.dumps(item, sort_keys=True) for item in items)


@pytest.mark.parametrize("second", ["the output first", "the call first"])
def test_two_pops_added_back_in_either_order_keep_the_call_before_its_output(
    store: TranscriptStore, second: str
) -> None:
    first, other = TranscriptSession(S, store), TranscriptSession(S, store)
    items = [{"role": "user", "content": "Weather?"}, *pair("call_1")]

    async def interleave() -> list[dict[str, Any]]:
        await first.add_items(items)
        output = await first.pop_item()  # one caller pops the output
        call = await other.pop_item()  # another, the call
        if second == "the output first":
            await first.add_items([output])  # the call comes back with it
            await other.add_items([call])  # in the context already: a no-op
        else:
            await other.add_items([call])
            await first.add_items([output])
        return await first.get_items()

    assert asyncio.run(interleave()) == items
    assert asyncio.run(first.pop_item()) == items[-1]  # and pops go on
    assert asyncio.run(other.pop_item()) == items[-2]


def test_popping_and_adding_back_in_tasks_and_processes_at_once_never_raises(
    store_url: str, tmp_path: Path
) -> None:
    """Two processes of three tasks each, every task with a session object of its own."""
    items = [{"role": "user", "content": "Plan my week."}]
    for day in range(6):
        items += [*pair(f"call_{day}"), answer(f"Day {day} is sunny.")]
    with TranscriptStore.open(store_url) as store:
        asyncio.run(TranscriptSession(S, store).add_items(items))
    children = [
        Child(tmp_path, f"pops{i}", program("agents_pops.py", store_url, S, "6", "3"))
        for i in range(2)
    ]
    try:
        release_together(children, "ready")
        reports = [json.loads(child.line(60)) for child in children]
    finally:
        for child in children:
            child.stop()
    assert [report["errors"] for report in reports] == [[], []]
    assert all(report["pops"] > 20 for report in reports), reports
    with TranscriptStore.open(store_url) as store:
        after = asyncio.run(TranscriptSession(S, store).get_items())
        assert calls_come_first(after)
        assert canonical(after) == canonical(items)  # every item once in the context
        assert store.verify_projections().ok
