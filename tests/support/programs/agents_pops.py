"""Child-process program for tests/frameworks/test_agents_pops.py: tasks popping the latest
item of an Agents SDK session and adding it back, as the SDK does after a failed retry.

    python agents_pops.py URL SESSION SECONDS TASKS

Prints `ready` and waits for `go`, then runs TASKS asyncio tasks for SECONDS, each with a
TranscriptSession of its own on one store, each pop followed by the add-back of what it
popped. Prints `{"pops": N, "errors": [...]}`: every exception a call raised.
"""

from __future__ import annotations

import asyncio
import sys

from parent import say, wait_for_go


async def pop_and_add_back(url: str, session_id: str, seconds: float, tasks: int) -> dict:
    from transcripts import TranscriptStore
    from transcripts.integrations.openai_agents import TranscriptSession

    store = TranscriptStore.open(url)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    pops, errors = 0, []

    async def task() -> None:
        nonlocal pops
        session = TranscriptSession(session_id, store)
        while loop.time() < deadline:
            try:
                item = await session.pop_item()
                await asyncio.sleep(0)  # let the other tasks pop between
                if item is not None:
                    await session.add_items([item])
                pops += 1
            except Exception as error:  # noqa: BLE001 - every one is reported
                errors.append(f"{type(error).__name__}: {error}")

    say("ready")
    await loop.run_in_executor(None, wait_for_go)
    await asyncio.gather(*(task() for _ in range(tasks)))
    store.close()
    return {"pops": pops, "errors": errors[:10]}


if __name__ == "__main__":
    url, session_id, seconds, tasks = sys.argv[1:]
    say(asyncio.run(pop_and_add_back(url, session_id, float(seconds), int(tasks))))
