"""Recipe: store an agent's turns and compact its context.

Run: python examples/store_and_compact.py [STORE_URL]   (default: sqlite:///agent.db)
"""

from __future__ import annotations

import sys

from transcripts import TranscriptStore


def summarize(messages: list[dict]) -> list[dict]:
    """The agent's summarizer (a model call in real life): keep the system prompt, replace
    the rest by one summary message."""
    summary = f"Summary of {len(messages) - 1} messages: a Lisbon trip, 3 days, in March."
    return [messages[0], {"role": "assistant", "content": summary}]


def main(url: str) -> None:
    with TranscriptStore.open(url) as store:
        store.start("trip", source="example-agent", model="fake-model")
        live = store.append("trip", [{"role": "system", "content": "You plan trips."}])
        for question, answer in [
            ("Plan three days in Lisbon.", "Day 1 Alfama, day 2 Belém, day 3 Sintra."),
            ("In which month?", "March: mild, some showers."),
        ]:
            live = live + [{"role": "user", "content": question}]
            live = live + [{"role": "assistant", "content": answer}]
            live = store.sync("trip", live)  # stores what is new, skips stored ids
        print(f"stored {len(store.history('trip'))} messages, {len(live)} active")

        result = store.compact("trip", summarize, reason="context over budget")
        live = result.messages  # committed or not, adopt this list
        print(f"compaction committed: {result.committed}; {len(live)} active")
        for message in live:
            print(f"  {message['role']}: {message['content']}")
        print(f"history keeps all {len(store.history('trip'))} messages")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "sqlite:///agent.db")
