"""The Claude Agent SDK's sessions on a transcript store.

Needs `pip install 'transcript-store[claude-agent-sdk]'`. With a model, hand the store to
the SDK: `query(prompt, options=ClaudeAgentOptions(session_store=sdk_store, resume=...))`;
here the entries the SDK would append (a turn, a `/compact`, a turn after it) are appended
directly, so the example runs offline.

Run: python examples/claude_agent_sdk_store.py [STORE_URL]   (default: sqlite:///agents.db)
"""

from __future__ import annotations

import asyncio
import sys

from transcripts.integrations.claude_agent_sdk import TranscriptSessionStore

KEY = {"project_key": "-work-demo", "session_id": "s-1"}


def record(uuid: str, parent: str | None, role: str, text: str, **extra: object) -> dict:
    kind = {"role": role, "content": text}
    return {"type": role, "uuid": uuid, "parentUuid": parent, "message": kind, **extra}


TURN = [
    record("u1", None, "user", "Which files are in this folder?"),
    record("a1", "u1", "assistant", "notes.txt and plan.md."),
]
COMPACT = [
    {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "b1",
        "parentUuid": None,
        "logicalParentUuid": "a1",
        "compactMetadata": {"trigger": "manual", "preTokens": 1200, "postTokens": 90},
    },
    record("s1", "b1", "user", "Summary: the user listed the folder.", isCompactSummary=True),
]
AFTER = [
    record("u2", "s1", "user", "Open plan.md."),
    record("a2", "u2", "assistant", "It holds three steps."),
]


async def main(url: str) -> None:
    sdk_store = TranscriptSessionStore(url=url)
    try:
        for batch in (TURN, COMPACT, AFTER, AFTER):  # AFTER twice: a re-sent uuid is kept once
            await sdk_store.append(KEY, batch)
        assert await sdk_store.load(KEY) == TURN + COMPACT + AFTER  # as appended, in order
        store = sdk_store.store  # the TranscriptStore under it: audit, search, history
        session = "-work-demo:s-1"  # <project_key>:<session_id>
        print([message["content"] for message in store.active(session)])
        for attempt in store.compactions(session):
            print(
                f"compaction {attempt['status']}: tokens {attempt['tokens_before']}"
                f" -> {attempt['tokens_after']}"
            )
    finally:
        sdk_store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "sqlite:///agents.db"))
