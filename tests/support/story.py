"""Sessions that tell every part of the story the web views show: compactions committed
and failed (a summarizer that raised, a replacement refused), a rewind and a restore, tool
calls and their results; and hostile sessions, whose every text is markup from
tests/data/hostile_markup.json."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from support.corpus import DATA, SESSION_IDS
from support.messages import TRIP, turns
from transcripts import TranscriptStore

MARKUP: dict[str, Any] = json.loads((DATA / "hostile_markup.json").read_text("utf-8"))
PAYLOADS: dict[str, str] = MARKUP["payloads"]
MARK_EVENTS = {"CompactionCommitted", "CompactionFailed", "Rewound"}


def tell_story(store: TranscriptStore, session_id: str = "story", *, messages: int = 120) -> None:
    """A session of `messages` messages (at least 30): the trip (a tool call and its result), two
    committed compactions with token counts, a summarizer that raised, a replacement the
    store refused, a rewind of three messages and the restore of one."""
    store.start(session_id, source="agent", model="gpt-x", metadata={"cwd": "/work"})
    store.append(session_id, TRIP)
    chunk = max((messages - len(TRIP) - 2) // 5, 4)
    store.append(session_id, turns(chunk, prefix="first"))
    compact(store, session_id, keep=2, tokens=(9_000, 1_200))
    store.append(session_id, turns(chunk, prefix="second"))
    store.compact(session_id, _raising, reason="over budget")
    store.append(session_id, turns(chunk // 2, prefix="meanwhile"))
    attempt = store.begin_compaction(session_id)
    edited = {**attempt.messages[0], "content": "edited"}  # a kept message may not change
    store.commit_compaction(attempt, [edited, {"role": "system", "content": "refused summary"}])
    store.append(session_id, turns(chunk, prefix="third"))
    compact(store, session_id, keep=1, tokens=(14_000, 900))
    store.append(session_id, turns(chunk // 2, prefix="fourth"))
    rewound = store.rewind(session_id, count=3, reason="user pressed undo")
    store.append(session_id, turns(chunk // 2, prefix="fifth"))
    store.append(session_id, rewound[:1])  # restores it
    stored = next(s["messages"] for s in store.sessions() if s["id"] == session_id)
    if messages > stored:
        store.append(session_id, turns(messages - stored, prefix="last"))


def compact(store: TranscriptStore, session_id: str, *, keep: int, tokens: tuple[int, int]) -> None:
    """A committed compaction keeping the first `keep` messages, with token counts."""
    attempt = store.begin_compaction(session_id)
    summary = {"role": "assistant", "content": f"Summary of {len(attempt.messages)} messages."}
    result = store.commit_compaction(
        attempt,
        [*attempt.messages[:keep], summary],
        reason="context over budget",
        tokens_before=tokens[0],
        tokens_after=tokens[1],
    )
    assert result.committed, result


def _raising(_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    raise TimeoutError("the summarizer timed out after 30 s")


def mark_versions(store: TranscriptStore, session_id: str) -> dict[str, list[int]]:
    """The versions of the events the timeline marks, by type (restores: appends of a
    message that a rewind took out)."""
    versions: dict[str, list[int]] = {kind: [] for kind in [*MARK_EVENTS, "Restored"]}
    rewound: set[str] = set()
    for event in store.iter_events(session_id):
        kind, data = event["type"], event["data"]
        if kind in MARK_EVENTS:
            versions[kind].append(event["version"])
        if kind == "Rewound":
            rewound.update(data["message_ids"])
        elif kind == "MessageAppended" and data["message_id"] in rewound:
            versions["Restored"].append(event["version"])
            rewound.discard(data["message_id"])
    return versions


# -- hostile sessions ---------------------------------------------------------------------------


def hostile_session_ids() -> list[str]:
    """The session ids of the hostile corpus that round-trip, and the markup ones."""
    markup = [f"s{index} {text}" for index, text in enumerate(PAYLOADS.values())]
    return [*SESSION_IDS.values(), *markup]


def tell_hostile(store: TranscriptStore, session_id: str) -> None:
    """A session whose source, model, metadata, message ids, contents, tool calls, reasons
    and errors are the hostile markup, with a committed and a failed compaction and a
    rewind, so that every view shows some of it."""
    texts = list(PAYLOADS.values())
    store.start(
        session_id,
        source=texts[0],
        model=texts[1],
        metadata={text: text for text in texts},
    )
    store.append(session_id, list(_hostile_messages(texts)))
    attempt = store.begin_compaction(session_id)
    summary = {"id": texts[3], "role": "assistant", "content": texts[4]}
    store.commit_compaction(attempt, [*attempt.messages[:2], summary], reason=texts[5])
    store.compact(session_id, _raising_markup, reason=texts[6])
    store.rewind(session_id, count=1, reason=texts[7])


def _hostile_messages(texts: list[str]) -> Iterator[dict[str, Any]]:
    for index, text in enumerate(texts):
        call = f"call {index} {text}"
        yield {"id": f"m{index} {text}", "role": "user", "content": text, text: text}
        yield {
            "id": f"a{index} {text}",
            "role": "assistant",
            "content": [{"type": "text", "text": text}, MARKUP["remote_image_part"]],
            "name": text,
            "tool_calls": [
                {"id": call, "type": "function", "function": {"name": text, "arguments": text}}
            ],
        }
        yield {"id": f"t{index} {text}", "role": "tool", "tool_call_id": call, "content": text}


def _raising_markup(_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    raise ValueError("\n".join(PAYLOADS.values()))
