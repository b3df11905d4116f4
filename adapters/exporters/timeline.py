"""A session's history in log order, with its compaction attempts where they happened.

`store.history()` gives every message in the order it was stored and `store.compactions()`
every attempt with the version of its event; the version each message was stored at comes
from the raw log. Merging on the version puts each attempt between the messages stored
before it and the ones stored after (a committed compaction's summaries come right after
its boundary). Also here: how a boundary and a time read for people (tables and Markdown).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ... import TranscriptStore


@dataclass(frozen=True)
class Entry:
    """A stored message: `store.history()`'s entry, plus the version of the event storing it."""

    version: int
    history: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {**self.history, "version": self.version}


@dataclass(frozen=True)
class Boundary:
    """A compaction attempt (committed or failed): `store.compactions()`'s entry."""

    attempt: dict[str, Any]

    @property
    def version(self) -> int:
        return int(self.attempt["version"])


Item = Entry | Boundary


def message_versions(store: TranscriptStore, session_id: str) -> dict[str, int]:
    """The version of the event that stored each message id of the session."""
    versions: dict[str, int] = {}
    for event in store.events(session_id):
        data = event["data"]
        if event["type"] == "MessageAppended":
            versions[data["message_id"]] = event["version"]
        elif event["type"] == "CompactionCommitted":
            for added in data["added"]:
                versions[added["id"]] = event["version"]
    return versions


def timeline(store: TranscriptStore, session_id: str) -> list[Item]:
    """Every message ever stored and every compaction attempt, in log order."""
    history = store.history(session_id)
    attempts = store.compactions(session_id)
    versions = message_versions(store, session_id)
    items: list[Item] = [Entry(versions.get(entry["id"], 0), entry) for entry in history]
    items += [Boundary(attempt) for attempt in attempts]
    # Stable: messages keep their stored order; a boundary goes before its own summaries.
    return sorted(items, key=lambda item: (item.version, isinstance(item, Entry)))


def tokens_saved(attempt: dict[str, Any]) -> int | None:
    """Tokens a committed compaction saved (None when failed or not measured)."""
    before, after = attempt["tokens_before"], attempt["tokens_after"]
    if attempt["status"] != "committed" or before is None or after is None:
        return None
    return int(before) - int(after)


def when(at: datetime, *, seconds: bool = True) -> str:
    """A timestamp for people: UTC, to the second (or the minute)."""
    return at.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def boundary_text(attempt: dict[str, Any]) -> str:
    """What a compaction attempt changed (or why it failed), its tokens and its reason."""
    if attempt["status"] == "committed":
        text = f"{len(attempt['superseded'])} superseded, {len(attempt['added'])} added"
        if tokens_saved(attempt) is not None:
            text += f", tokens {attempt['tokens_before']}→{attempt['tokens_after']}"
    else:
        text = f"{attempt['failure']}: {attempt['error']}"
    if attempt["reason"]:
        text += f" ({attempt['reason']})"
    return text
