"""A Claude Code record as a stored message, and what a record is.

Conversation records (`user`, `assistant`, `system`, `attachment`) become messages, one per
record, under the record's `uuid`: `{"role", "content", "claude_code": <the record exactly as
written>}`. An assistant reply is written one record per content block, sharing its
`message.id`; they stay one message each, in order: the Messages API joins consecutive
messages of one role, which is what Claude Code does when it sends them, so the active
context read with that rule is the request Claude Code makes. Roles and content:

- `user`, `assistant`: the record's `message.role` and `message.content` (text, tool_use,
  tool_result blocks);
- `system` of subtype `local_command` (a slash command's output): `user`, its text, as
  Claude Code sends it; any other `system` record: `system`, its text;
- `attachment` (context Claude Code adds: the environment, a date, listings, snapshots of
  its prompt, sent to the model as reminders): `system`, `[attachment <type>]`.

A `compact_boundary` and a failed `/compact` are compactions, not messages alone (see
`plan`); every other record type is bookkeeping (`plan.session_metadata` keeps what an
auditor needs of it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KEY = "claude_code"
CONVERSATION = frozenset({"user", "assistant", "system", "attachment"})


def is_conversation(record: Mapping[str, Any]) -> bool:
    return record.get("type") in CONVERSATION and isinstance(record.get("uuid"), str)


def is_boundary(record: Mapping[str, Any]) -> bool:
    return record.get("type") == "system" and record.get("subtype") == "compact_boundary"


def failed_compact(record: Mapping[str, Any]) -> str | None:
    """The error text of a failed `/compact` (a `local_command` record whose outcome is
    `failed`), else None."""
    outcome = record.get("commandOutcome")
    if (
        record.get("type") == "system"
        and record.get("subtype") == "local_command"
        and isinstance(outcome, Mapping)
        and outcome.get("kind") == "failed"
    ):
        content = record.get("content")
        return content if isinstance(content, str) else "the /compact command failed"
    return None


def is_summary(record: Mapping[str, Any]) -> bool:
    return record.get("type") == "user" and record.get("isCompactSummary") is True


def to_message(record: dict[str, Any]) -> dict[str, Any]:
    """The stored message of a conversation record, under its uuid."""
    kind = record["type"]
    inner = record.get("message")
    if kind in ("user", "assistant") and isinstance(inner, Mapping):
        role = inner.get("role") if inner.get("role") in ("user", "assistant") else kind
        content = inner.get("content", "")
    elif kind == "attachment":
        attachment = record.get("attachment")
        what = attachment.get("type") if isinstance(attachment, Mapping) else None
        role, content = "system", f"[attachment {what or 'unknown'}]"
    else:
        role = "user" if record.get("subtype") == "local_command" else "system"
        text = record.get("content")
        content = text if isinstance(text, str) else f"[{kind} {record.get('subtype') or ''}]"
    return {"id": record["uuid"], "role": role, "content": content, KEY: record}


def record_of(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """The record a stored message holds, if an import stored it."""
    record = message.get(KEY)
    return record if isinstance(record, dict) else None
