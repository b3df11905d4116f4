"""The demo: a short agent session that survives a failed compaction and commits another."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.console import Console
from rich.text import Text

from ... import TranscriptStore
from .render import active_table, audit_table, history_table

CONVERSATION = [
    {"role": "system", "content": "You are a careful travel assistant."},
    {"role": "user", "content": "Plan three days in Lisbon for me in March."},
    {"role": "assistant", "content": "Day 1 Alfama and the castle, day 2 Belém, day 3 Sintra."},
    {"role": "user", "content": "What will the weather be like?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_weather",
                "type": "function",
                "function": {"name": "forecast", "arguments": '{"city": "Lisbon"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_weather", "content": "March: 17°C, some showers."},
    {"role": "assistant", "content": "Mild, around 17°C, with some showers: pack a light jacket."},
    {"role": "user", "content": "Great, and where should I eat pastéis de nata?"},
]


def run_demo(store: TranscriptStore, console: Console) -> str:
    """Run the demo session on `store`, print what it stored, return its session id."""
    session_id = datetime.now(UTC).strftime("demo-%Y%m%d-%H%M%S-%f")
    store.start(session_id, source="demo", model="example-model")
    live = store.append(session_id, CONVERSATION)
    console.print(
        Text.assemble("Session ", (session_id, "bold"), f": {len(live)} messages stored.")
    )

    def summarizer_down(messages: list[dict]) -> list[dict]:
        raise RuntimeError("database is locked")

    failed = store.compact(session_id, summarizer_down, reason="context over budget")
    console.print(
        f"Compaction failed ({failed.failure}: {failed.error}); "
        f"{len(failed.messages)} messages still active, none lost or duplicated."
    )
    store.sync(session_id, failed.messages)  # the agent's flush: stores nothing new

    attempt = store.begin_compaction(session_id)
    system, *older, last_question = attempt.messages
    summary = {
        "role": "assistant",
        "content": "Summary: a 3-day Lisbon plan (Alfama, Belém, Sintra); March is mild "
        "(17°C, showers).",
    }
    committed = store.commit_compaction(
        attempt,
        [system, summary, last_question],
        reason="context over budget",
        tokens_before=412,
        tokens_after=96,
    )
    console.print(
        f"Compaction committed: {len(older)} messages superseded by one summary; "
        f"{len(committed.messages)} active."
    )
    console.print(active_table(store.active(session_id)))
    console.print(history_table(store.history(session_id)))
    console.print(audit_table(store.compactions(session_id)))
    return session_id
