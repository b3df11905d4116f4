"""What importing the records of one Claude Code session does, step by step.

Records are taken in the file's order (Claude Code appends each record after its parent):
- a conversation record becomes one `Append` of its message (`records.to_message`);
- a record whose `uuid` was seen already is a copy (claude-code#92089: a later `/compact`
  re-appends every message with its original uuid): dropped and counted;
- a `compact_boundary` is one `Compact` once its `isCompactSummary` record is read: the
  replacement is the summary (a new message under its uuid) then the messages of the
  boundary's preserved segment that are active, in order (as Claude Code sends them);
  everything else active is superseded; `tokens_before` / `tokens_after` are
  `preTokens` / `postTokens`, the trigger is in the reason, `compactMetadata` in the
  audit's metadata. The conversation records between the boundary and its summary come
  after it;
- a failed `/compact` (`local_command`, outcome `failed`) is one `Fail` with its error
  text, then its record is appended (Claude Code sends its text to the model);
- anything else is bookkeeping, not planned (`session_metadata` sums up what an auditor
  needs of it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ....domain.messages import content_hash
from .records import (
    failed_compact,
    is_boundary,
    is_conversation,
    is_summary,
    to_message,
)

SOURCE = "claude-code"


@dataclass(frozen=True)
class Append:
    message: dict[str, Any]


@dataclass(frozen=True)
class Compact:
    summary: dict[str, Any] | None  # None: a boundary whose summary the file lacks
    kept: list[dict[str, Any]]
    reason: str
    tokens_before: int | None
    tokens_after: int | None
    metadata: dict[str, Any]

    @property
    def replacement(self) -> list[dict[str, Any]]:
        return ([self.summary] if self.summary else []) + self.kept


@dataclass(frozen=True)
class Fail:
    error: str
    reason: str


Step = Append | Compact | Fail


@dataclass
class Plan:
    """The steps of a session's records, and what they make of it."""

    steps: list[Step] = field(default_factory=list)
    active: list[str] = field(default_factory=list)  # the context once imported
    duplicates: int = 0
    notes: list[str] = field(default_factory=list)
    pending: int = 0  # records held back: a boundary whose summary is not read yet

    @property
    def messages(self) -> int:
        return sum(
            isinstance(s, Append) or isinstance(s, Compact) and s.summary is not None
            for s in self.steps
        )

    @property
    def committed(self) -> int:
        return sum(isinstance(s, Compact) for s in self.steps)

    @property
    def failed(self) -> int:
        return sum(isinstance(s, Fail) for s in self.steps)


def plan_records(records: Iterable[Mapping[str, Any]], *, final: bool = True) -> Plan:
    """Plan a session's records (in order). `final`: the records are all there will be (a
    file); else (a store still receiving entries) a boundary whose summary has not come yet
    is held back with the records after it, and planned once it comes."""
    planner = Planner()
    planner.feed(records)
    return planner.finish() if final else planner.plan


class Planner:
    """Plans records as they come (`feed`): its `plan` grows by the steps they make; a
    boundary whose summary has not come is held back (`plan.pending`) until it does, or
    until `finish`."""

    def __init__(self) -> None:
        self.plan = Plan()
        self.messages: dict[str, dict[str, Any]] = {}  # every message planned, by id
        self._seen: dict[str, str] = {}  # uuid -> content hash of the record first read
        self._boundary: dict[str, Any] | None = None
        self._held: list[dict[str, Any]] = []
        self._tip: str | None = None  # the last record of the chain read so far
        self._branches = 0

    def feed(self, records: Iterable[Mapping[str, Any]]) -> None:
        for record in records:
            self._one(dict(record))
        self.plan.pending = len(self._held) + 1 if self._boundary is not None else 0

    def finish(self) -> Plan:
        """The plan of all the records: a boundary still waiting is planned without its
        summary, and the notes are complete."""
        if self._boundary is not None:
            self.plan.notes.append(f"compact boundary {self._boundary['uuid']} has no summary")
            self._compact(None)
        if self._branches:
            self.plan.notes.append(
                f"{self._branches} records do not continue the record before them (Claude "
                "Code went on from an earlier point): imported in the file's order"
            )
        return self.plan

    def _one(self, record: dict[str, Any]) -> None:
        uuid = record.get("uuid")
        if isinstance(uuid, str) and (is_conversation(record) or is_boundary(record)):
            digest = content_hash({"role": "user", "record": record})
            if uuid in self._seen:
                self.plan.duplicates += 1
                if self._seen[uuid] != digest:
                    self.plan.notes.append(f"a copy of record {uuid} differs: the first kept")
                return
            self._seen[uuid] = digest
            parent = record.get("parentUuid")
            self._branches += parent is not None and self._tip is not None and parent != self._tip
            self._tip = uuid
        if is_boundary(record):
            if self._boundary is not None:
                self.plan.notes.append(f"compact boundary {self._boundary['uuid']} has no summary")
                self._compact(None)
            self._boundary = record
        elif not is_conversation(record):
            return
        elif self._boundary is not None:
            if is_summary(record):
                self._compact(to_message(record))
            else:
                self._held.append(record)
        else:
            error = failed_compact(record)
            if error is not None:
                self.plan.steps.append(Fail(error, f"Claude Code /compact failed ({uuid})"))
            self._append(record)

    def _append(self, record: dict[str, Any]) -> None:
        message = to_message(record)
        self.plan.steps.append(Append(message))
        self.messages[message["id"]] = message
        self.plan.active.append(message["id"])

    def _compact(self, summary: dict[str, Any] | None) -> None:
        """Plan the waiting boundary with `summary`, then the records held after it."""
        assert self._boundary is not None
        _compact(self.plan, self.messages, self._boundary, summary)
        held, self._boundary, self._held = self._held, None, []
        for record in held:
            self._append(record)


def _compact(
    plan: Plan,
    messages: dict[str, dict[str, Any]],
    boundary: dict[str, Any],
    summary: dict[str, Any] | None,
) -> None:
    meta = boundary.get("compactMetadata")
    meta = dict(meta) if isinstance(meta, Mapping) else {}
    preserved = set(_preserved(meta))
    kept = [messages[m] for m in plan.active if m in preserved]
    trigger = meta.get("trigger") if isinstance(meta.get("trigger"), str) else "unknown"
    compact = Compact(
        summary=summary,
        kept=kept,
        reason=f"Claude Code {trigger} compaction ({boundary['uuid']})",
        tokens_before=_count(meta.get("preTokens")),
        tokens_after=_count(meta.get("postTokens")),
        metadata={"trigger": trigger, "boundary": boundary["uuid"], "compactMetadata": meta},
    )
    plan.steps.append(compact)
    if summary:
        messages[summary["id"]] = summary
    plan.active = [m["id"] for m in compact.replacement]


def _preserved(meta: Mapping[str, Any]) -> list[str]:
    """The uuids of a boundary's preserved segment."""
    kept = meta.get("preservedMessages")
    if isinstance(kept, Mapping):
        for key in ("allUuids", "uuids"):
            if isinstance(kept.get(key), list):
                return [u for u in kept[key] if isinstance(u, str)]
    segment = meta.get("preservedSegment")
    if isinstance(segment, Mapping):
        return [u for u in (segment.get("headUuid"), segment.get("tailUuid")) if isinstance(u, str)]
    return []


def _count(value: object) -> int | None:
    return value if type(value) is int and value >= 0 else None


def session_metadata(records: list[Mapping[str, Any]]) -> dict[str, Any]:
    """What a session's records say of it: its cwd, git branch, CLI version, first and
    last timestamps, and the bookkeeping an auditor needs (the last `cost-state`, the tools
    used, the last `mode`, the number of API requests)."""
    first = next((r for r in records if is_conversation(r)), {})
    stamps = [r["timestamp"] for r in records if isinstance(r.get("timestamp"), str)]
    costs = [r for r in records if r.get("type") == "cost-state"]
    modes = [r.get("mode") for r in records if r.get("type") == "mode"]
    tools: list[str] = []
    for record in records:
        if record.get("type") == "tools-used" and isinstance(record.get("tools"), list):
            tools += [t for t in record["tools"] if isinstance(t, str) and t not in tools]
    return {
        "cwd": first.get("cwd"),
        "git_branch": first.get("gitBranch"),
        "version": first.get("version"),
        "first_timestamp": min(stamps) if stamps else None,
        "last_timestamp": max(stamps) if stamps else None,
        "cost": {k: v for k, v in costs[-1].items() if k != "type"} if costs else None,
        "tools_used": tools,
        "mode": modes[-1] if modes else None,
        "api_requests": sum(r.get("type") == "api-request" for r in records),
    }
