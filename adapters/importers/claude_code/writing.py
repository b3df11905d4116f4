"""Carrying out a session's plan through the store's public API, after what it holds.

What the store holds of a session is compared with the plan first, writing nothing: its
imported events (`MessageAppended`, `CompactionCommitted`, `CompactionFailed`, in order)
must be the plan's first steps. Then the steps after them are written: appends and
committed compactions in one `write` per batch, fenced on the session's version; a failed
compaction through `begin_compaction` / `fail_compaction`, checked to stand at that version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .... import Append as AppendChange
from .... import Compact as CompactChange
from .... import SessionNotFoundError, SetState, TranscriptStore, VersionConflictError
from .files import ClaudeCodeImportError
from .plan import Append, Compact, Fail, Plan, Step

IMPORTED = ("MessageAppended", "CompactionCommitted", "CompactionFailed")
_BATCH = 500


@dataclass(frozen=True)
class Standing:
    """Where the store stands in a plan: `exists`, `done` steps stored, `erased`, or
    `diverged` (the first step that differs, described)."""

    exists: bool
    done: int
    erased: bool = False
    diverged: str | None = None


def standing(store: TranscriptStore, session_id: str, plan: Plan) -> Standing:
    try:
        events = store.events(session_id)
    except SessionNotFoundError:
        return Standing(False, 0)
    if events and events[0]["type"] == "Erased":
        return Standing(True, 0, erased=True)
    stored = [event for event in events if event["type"] in IMPORTED]
    for index, (event, step) in enumerate(zip(stored, plan.steps, strict=False)):
        if _identity(event) != _planned(step):
            held, planned = _identity(event), _planned(step)
            return Standing(True, index, diverged=f"step {index + 1}: {held} is not {planned}")
    if len(stored) > len(plan.steps):
        return Standing(True, len(plan.steps), diverged="the store holds more than the records")
    return Standing(True, len(stored))


def _identity(event: dict[str, Any]) -> tuple[str, str]:
    data = event["data"]
    if event["type"] == "MessageAppended":
        return ("message", data["message_id"])
    return (event["type"], data["reason"])


def _planned(step: Step) -> tuple[str, str]:
    if isinstance(step, Append):
        return ("message", step.message["id"])
    kind = "CompactionCommitted" if isinstance(step, Compact) else "CompactionFailed"
    return (kind, step.reason)


def write_plan(
    store: TranscriptStore,
    session_id: str,
    plan: Plan,
    done: int,
    *,
    start: dict[str, Any] | None = None,
    then: Sequence[SetState] = (),
    version: int | None = None,
) -> int:
    """Write the plan's steps after the first `done`, and the changes `then` in the last
    write, fenced on `version` (None: the session's version now); `start`: the arguments of
    `store.start` for a session not stored yet. Return the session's version."""
    if start is not None:
        store.start(session_id, **start)
    if version is None or start is not None:
        version = store.version(session_id)
    batch: list[AppendChange | CompactChange | SetState] = []
    appends: list[dict[str, Any]] = []

    def flush() -> None:
        nonlocal version, batch, appends
        if appends:
            batch.append(AppendChange(appends))
        if batch:
            try:
                version = store.write(session_id, batch, expected_version=version)
            except VersionConflictError:
                raise _changed(session_id) from None
        batch, appends = [], []

    for step in plan.steps[done:]:
        if isinstance(step, Append):
            appends.append(step.message)
            if len(appends) >= _BATCH:
                flush()
        elif isinstance(step, Compact):
            if appends:
                batch.append(AppendChange(appends))
                appends = []
            batch.append(
                CompactChange(
                    step.replacement,
                    reason=step.reason,
                    tokens_before=step.tokens_before,
                    tokens_after=step.tokens_after,
                    metadata=step.metadata,
                )
            )
        else:
            flush()
            version = _fail(store, session_id, step, version)
    if appends:
        batch.append(AppendChange(appends))
        appends = []
    batch += then
    flush()
    return version


def _fail(store: TranscriptStore, session_id: str, step: Fail, version: int) -> int:
    attempt = store.begin_compaction(session_id)
    if attempt.version != version:
        raise _changed(session_id)
    result = store.fail_compaction(attempt, step.error, reason=step.reason)
    return result.version if result.version is not None else store.version(session_id)


def _changed(session_id: str) -> ClaudeCodeImportError:
    return ClaudeCodeImportError(
        f"session {session_id!r} changed in the store while it was imported (another "
        "writer?); import it again to resume"
    )
