"""Recipe: audit a failed compaction.

A summarizer fails (here it raises, as a model call or a locked database would): the store
records the attempt, changes no message, and the audit says what it would have superseded.

Run: python examples/audit_failed_compaction.py [STORE_URL]   (default: sqlite:///audit.db)
Then, on the command line: transcripts --db STORE_URL audit support --failed
"""

from __future__ import annotations

import sys

from transcripts import TranscriptStore


def failing_summarizer(messages: list[dict]) -> list[dict]:
    raise RuntimeError("database is locked")


def main(url: str) -> None:
    with TranscriptStore.open(url) as store:
        store.start("support", source="example-agent")
        live = store.append(
            "support",
            [
                {"role": "system", "content": "You answer support tickets."},
                {"role": "user", "content": "My export fails."},
                {"role": "assistant", "content": "Which format?"},
                {"role": "user", "content": "HTML."},
            ],
        )
        result = store.compact("support", failing_summarizer, reason="context over budget")
        print(f"committed: {result.committed}, failure: {result.failure}")
        print(f"active messages unchanged: {result.messages == live}")

        for attempt in store.compactions("support"):
            print(
                f"{attempt['status']} {attempt['failure']}: {attempt['error']}; "
                f"would have superseded {len(attempt['superseded'])} messages"
            )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "sqlite:///audit.db")
