"""A run's compactions, told in entries: what each summarized, kept and added.

pydantic-ai hands a store's `write_record` entries only; what a compaction did is on the
run's result (`AgentRunResult.compactions`, one `CompactionRecord` each), which
`TranscriptConversationStore.save` captures. A record says it in the run's messages: the
history it `replaced` (ending with the request being answered), its `part` (the summary),
and how many of its last messages it kept as they were (`messages_after - kept_from`); the
rest it summarized. The compacted history's messages before `kept_from` hold the summary;
they are what the next compaction replaced starts with, or the run's last history.

Each message is told in entries by the entry it was read from or saved as (`entries.mark`),
else by the entry of the conversation holding the same message (a conversation read back
from JSON), else by the entries of the parts it holds (a request the run merged from stored
ones). A compaction whose summary is no
new entry of this save (the result saved twice) was recorded already: it is left out, as is
one whose record lost what it replaced (a result read back from JSON).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic_ai.conversation_store import ConversationEntry
from pydantic_ai.messages import CompactionRecord, ModelMessage
from pydantic_ai.run import AgentRunResult
from pydantic_core import to_jsonable_python

from .entries import KEY, entry_id, message_json, part_entry_ids


@dataclass(frozen=True)
class Captured:
    """What a run's result says of its compactions, captured as it is saved."""

    conversation_id: str
    records: list[CompactionRecord]
    final: list[ModelMessage]  # the run's history when it ended

    @classmethod
    def of(cls, result: AgentRunResult[Any]) -> Captured:
        return cls(result.conversation_id, list(result.compactions), list(result.all_messages()))


@dataclass(frozen=True)
class EntryCompaction:
    """A compaction told in entries."""

    added: list[str]  # new entries its compacted history holds before what it kept: the summary
    summarized: list[str]
    answering: str | None  # the entry of the request it was made for: the last it replaced
    reason: str
    metadata: dict[str, Any]


class EntryFinder:
    """Which entries a message of a run stands for (see the module's doc)."""

    def __init__(self, stored: Mapping[str, Mapping[str, Any]], path: Sequence[str]) -> None:
        self._stored = stored  # the conversation's entries, by id
        self._path = path
        self._by_json: dict[bytes, list[str]] | None = None

    def __call__(self, message: ModelMessage) -> list[str]:
        own = entry_id(message)
        if own is not None:
            return [own]
        return self._equal(message)[-1:] or part_entry_ids(message)

    def _equal(self, message: ModelMessage) -> list[str]:
        if self._by_json is None:
            self._by_json = {}
            for entry_id in self._path:
                json = _canonical(self._stored[entry_id][KEY]["message"])
                self._by_json.setdefault(json, []).append(entry_id)
        return self._by_json.get(_canonical(message_json(message)), [])


def in_entries(
    captured: Captured, new_entries: Sequence[ConversationEntry], find: EntryFinder
) -> list[EntryCompaction]:
    """The captured compactions whose summary this save stores, told in entries."""
    told = []
    for index, record in enumerate(captured.records):
        later = captured.records[index + 1 :]
        following = later[0].replaced if later else captured.final
        compaction = _told(record, _compacted_prefix(record, following), new_entries, find)
        if compaction is not None:
            told.append(compaction)
    return told


def _told(
    record: CompactionRecord,
    prefix: list[ModelMessage] | None,
    new_entries: Sequence[ConversationEntry],
    find: EntryFinder,
) -> EntryCompaction | None:
    summary = _summary_entries(record, new_entries)
    if record.replaced is None or not summary:
        return None  # what it replaced is lost, or an earlier save stored it
    new = {entry.id for entry in new_entries}
    in_prefix = _ids(prefix, find) if prefix is not None else summary
    tail = record.messages_after - record.kept_from
    cut = len(record.replaced) - tail
    kept = _ids(record.replaced[cut:], find)
    keeping = {*kept, *in_prefix}
    answering = _ids(record.replaced[-1:], find)
    return EntryCompaction(
        added=[entry_id for entry_id in in_prefix if entry_id in new] or summary,
        summarized=[i for i in _ids(record.replaced[:cut], find) if i not in keeping],
        answering=answering[-1] if answering else None,
        reason=record.reason,
        metadata=_metadata(record),
    )


def _summary_entries(
    record: CompactionRecord, new_entries: Sequence[ConversationEntry]
) -> list[str]:
    """The new entries holding the record's part: that very part, else one equal to it."""
    for holds in (lambda part: part is record.part, lambda part: part == record.part):
        found = [e.id for e in new_entries if any(holds(part) for part in e.message.parts)]
        if found:
            return found[:1]
    return []


def _compacted_prefix(
    record: CompactionRecord, following: list[ModelMessage] | None
) -> list[ModelMessage] | None:
    """The compacted history's messages before what it kept, where the history after it
    starts with them (checked: its part where the record says); else None."""
    if following is None or len(following) <= record.part_message_index:
        return None
    holder = following[record.part_message_index]
    if not any(part is record.part for part in holder.parts):
        return None
    return following[: record.kept_from]


def _ids(messages: Sequence[ModelMessage], find: EntryFinder) -> list[str]:
    return list(dict.fromkeys(entry_id for message in messages for entry_id in find(message)))


def _metadata(record: CompactionRecord) -> dict[str, Any]:
    """What the record says of the compaction besides what it replaced, as JSON."""
    metadata = {
        "handler": record.handler,
        "model": record.model_name,
        "provider": record.provider_name,
        "messages_before": record.messages_before,
        "messages_after": record.messages_after,
        "kept_from": record.kept_from,
    }
    if record.metadata is not None:
        metadata["metadata"] = to_jsonable_python(record.metadata)
    return metadata


def _canonical(json: object) -> bytes:
    return orjson.dumps(json, option=orjson.OPT_SORT_KEYS)
