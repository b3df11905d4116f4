"""A session's history in log order, with its compaction attempts and rewinds where they
happened.

`store.history()` gives every message in the order it was stored and `store.compactions()`
every attempt with the version of its event; the version each message was first stored at,
each rewind and each restore come from the raw log. Merging on the version puts each attempt
and each rewind between the messages stored before it and the ones stored after (a committed
compaction's summaries come right after its boundary). Also here: how a boundary, a rewind,
a message's state and a time read for people (tables and Markdown).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ... import TranscriptStore


@dataclass(frozen=True)
class Entry:
    """A stored message: `store.history()`'s entry, plus the version of the event storing it,
    the version of the rewind holding it out of the context and of its last restore."""

    version: int
    history: dict[str, Any]
    rewound_version: int | None = None
    restored_version: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {**self.history, "version": self.version}


@dataclass(frozen=True)
class Boundary:
    """A compaction attempt (committed or failed): `store.compactions()`'s entry."""

    attempt: dict[str, Any]

    @property
    def version(self) -> int:
        return int(self.attempt["version"])


@dataclass(frozen=True)
class Rewind:
    """A `Rewound` event: the messages it took out of the context, and why."""

    version: int
    at: datetime
    message_ids: list[str]
    reason: str


Item = Entry | Boundary | Rewind


@dataclass
class _Versions:
    """Per message id, the versions of the events that stored, rewound and restored it."""

    stored: dict[str, int] = field(default_factory=dict)
    rewound: dict[str, int] = field(default_factory=dict)
    restored: dict[str, int] = field(default_factory=dict)


def timeline(store: TranscriptStore, session_id: str) -> list[Item]:
    """Every message ever stored, every compaction attempt and every rewind, in log order."""
    history = store.history(session_id)
    attempts = store.compactions(session_id)
    versions, rewinds = _Versions(), []
    for event in store.events(session_id):
        data, version = event["data"], event["version"]
        if event["type"] == "MessageAppended":
            if data["message_id"] in versions.stored:  # appended again: a restore
                versions.restored[data["message_id"]] = version
            versions.stored.setdefault(data["message_id"], version)
        elif event["type"] == "CompactionCommitted":
            versions.stored.update((added["id"], version) for added in data["added"])
        elif event["type"] == "Rewound":
            versions.rewound.update((message_id, version) for message_id in data["message_ids"])
            rewinds.append(Rewind(version, event["at"], data["message_ids"], data["reason"]))
    items: list[Item] = [
        Entry(
            versions.stored.get(entry["id"], 0),
            entry,
            versions.rewound.get(entry["id"]) if entry["rewound"] else None,
            versions.restored.get(entry["id"]),
        )
        for entry in history
    ]
    items += [Boundary(attempt) for attempt in attempts]
    items += rewinds
    # Stable: messages keep their stored order; a boundary goes before its own summaries.
    return sorted(items, key=lambda item: (item.version, isinstance(item, Entry)))


def tokens_saved(attempt: dict[str, Any]) -> int | None:
    """Tokens a committed compaction saved (None when failed or not measured)."""
    before, after = attempt["tokens_before"], attempt["tokens_after"]
    if attempt["status"] != "committed" or before is None or after is None:
        return None
    return int(before) - int(after)


def state(item: Entry, compaction_versions: dict[str, int]) -> str:
    """A message's state for people: active (summary, restored), superseded or rewound, with
    the version of the event that made it so (`compaction_versions`: by compaction id)."""
    entry = item.history
    if entry["superseded_by"]:
        by = compaction_versions.get(entry["superseded_by"])
        return f"superseded by v{by}" if by else "superseded"
    if entry["rewound"]:
        return f"rewound by v{item.rewound_version}" if item.rewound_version else "rewound"
    text = "active summary" if entry["added_by"] else "active"
    return f"{text}, restored at v{item.restored_version}" if item.restored_version else text


def rewind_text(rewind: Rewind) -> str:
    """What a rewind took out of the context, and why."""
    text = f"{len(rewind.message_ids)} rewound: {', '.join(rewind.message_ids)}"
    return f"{text} ({rewind.reason})" if rewind.reason else text


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
