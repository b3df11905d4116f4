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
- anything else is bookkeeping (`BOOKKEEPING_KEPT` are summed up in the session metadata).
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
    plan = Plan()
    messages: dict[str, dict[str, Any]] = {}
    seen: dict[str, str] = {}  # uuid -> content hash of the record first read
    boundary: dict[str, Any] | None = None
    held: list[dict[str, Any]] = []
    tip: str | None = None  # the last record of the chain read so far
    branches = 0
    for record in records:
        uuid = record.get("uuid")
        if isinstance(uuid, str) and (is_conversation(record) or is_boundary(record)):
            digest = content_hash({"role": "user", "record": dict(record)})
            if uuid in seen:
                plan.duplicates += 1
                if seen[uuid] != digest:
                    plan.notes.append(f"a copy of record {uuid} differs from it: the first kept")
                continue
            seen[uuid] = digest
            parent = record.get("parentUuid")
            branches += parent is not None and tip is not None and parent != tip
            tip = uuid
        if is_boundary(record):
            if boundary is not None:
                plan.notes.append(f"compact boundary {boundary['uuid']} has no summary")
                _compact(plan, messages, boundary, None)
                _append_all(plan, messages, held)
                held = []
            boundary = dict(record)
            continue
        if not is_conversation(record):
            continue
        if boundary is not None:
            if is_summary(record):
                _compact(plan, messages, boundary, to_message(dict(record)))
                _append_all(plan, messages, held)
                boundary, held = None, []
            else:
                held.append(dict(record))
            continue
        error = failed_compact(record)
        if error is not None:
            plan.steps.append(Fail(error, f"Claude Code /compact failed ({record['uuid']})"))
        _append_all(plan, messages, [dict(record)])
    if branches:
        plan.notes.append(
            f"{branches} records do not continue the record before them (Claude Code went on "
            "from an earlier point): imported in the file's order"
        )
    if boundary is not None:
        if final:
            plan.notes.append(f"compact boundary {boundary['uuid']} has no summary")
            _compact(plan, messages, boundary, None)
            _append_all(plan, messages, held)
        else:
            plan.pending = len(held) + 1
    return plan


def _append_all(
    plan: Plan, messages: dict[str, dict[str, Any]], records: list[dict[str, Any]]
) -> None:
    for record in records:
        message = to_message(record)
        plan.steps.append(Append(message))
        messages[message["id"]] = message
        plan.active.append(message["id"])


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


BOOKKEEPING_KEPT = ("cost-state", "tools-used", "mode", "api-request")


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
