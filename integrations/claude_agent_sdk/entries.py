"""A session's entries as the SDK appended them, kept in its state, batch by batch.

Each `append` that brings new entries adds one state key, `claude_code.entries.<n>` (n from
1, zero-padded), holding the batch in order: an entry that is stored as a message (a
conversation record, under its uuid) as `{"$message": <uuid>}`, any other verbatim. `load`
reads them back, each `$message` as the record its message holds: deep-equal to what was
appended. Uuids already kept are not kept again (the SDK's idempotency key).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from transcripts.adapters.importers.claude_code.records import record_of

PREFIX = "claude_code.entries."
REF = "$message"


def batch_key(number: int) -> str:
    return f"{PREFIX}{number:08d}"


def batches(state: Mapping[str, Any]) -> list[list[dict[str, Any]]]:
    return [state[key] for key in sorted(k for k in state if k.startswith(PREFIX))]


def kept_entries(state: Mapping[str, Any], history: Iterable[Mapping[str, Any]]) -> list[Any]:
    """Every entry kept, in order, `$message` references resolved from the history."""
    records = {}
    for entry in history:
        record = record_of(entry["message"])
        if record is not None:
            records[entry["message"]["id"]] = record
    kept: list[Any] = []
    for batch in batches(state):
        for entry in batch:
            if isinstance(entry, dict) and set(entry) == {REF}:
                kept.append(records[entry[REF]])
            else:
                kept.append(entry)
    return kept


def uuid_of(entry: Any) -> str | None:
    uuid = entry.get("uuid") if isinstance(entry, Mapping) else None
    return uuid if isinstance(uuid, str) else None


def new_entries(kept: set[str], entries: Iterable[Any]) -> list[Any]:
    """The entries not kept yet (`kept`: the uuids kept): those without a uuid, and the
    first of each new uuid."""
    seen = set(kept)
    new = []
    for entry in entries:
        uuid = uuid_of(entry)
        if uuid is not None:
            if uuid in seen:
                continue
            seen.add(uuid)
        new.append(entry)
    return new


def as_kept(entries: Iterable[Any], message_ids: set[str]) -> list[Any]:
    """A batch as the state keeps it: entries stored as messages by reference."""
    return [{REF: uuid_of(entry)} if uuid_of(entry) in message_ids else entry for entry in entries]
