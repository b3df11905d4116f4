"""Importing Codex rollouts through the TranscriptStore API (see the package docstring).

One rollout at a time: read and planned (`plan`), then compared with what the store holds of
its session, writing nothing: nothing yet (imported), all of it (unchanged), the steps of a
prefix of the file (resumed after them: the session went on in Codex since, or an import was
cut short) or another history (diverged: Codex rewrote the file, codex#44363; nothing is
written). Then written, with appends fenced on the session's version.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .... import SessionNotFoundError, TranscriptStore, VersionConflictError
from ....domain.compaction import ORPHANED_TOOL_RESULT
from ....domain.messages import content_hash
from .forks import MissingBase, Rollouts
from .plan import NotARollout, plan_rollout
from .rollout import CodexImportError, base_folders, default_folder, find_rollouts, read_rollout
from .steps import SOURCE, WINDOW_EXCEEDED, Append, Compact, Fail, SessionPlan, Step

Status = Literal["imported", "unchanged", "diverged", "doubtful", "unreadable"]
Progress = Callable[[int, int], None]

_BATCH = 500
_REASON_LINE = re.compile(r"rollout lines? (\d+)")


@dataclass(frozen=True)
class SessionReport:
    """What importing one rollout did (or would do, in a dry run).

    Counts describe the session as stored once imported: `messages` in its history, `active`
    in its context, compactions committed and failed. `status`: imported; doubtful (imported,
    but the notes say what the file could not tell); unchanged (the store holds it already);
    diverged (the store holds another history for this session: nothing was written, and
    `diverged_at_line` is the file's first line that disagrees); unreadable (not a rollout).
    """

    path: str
    session_id: str | None
    status: Status
    messages: int = 0
    active: int = 0
    compactions_committed: int = 0
    compactions_failed: int = 0
    diverged_at_line: int | None = None
    notes: list[str] = field(default_factory=list)


def import_codex(
    store: TranscriptStore,
    paths: Iterable[str | Path] | str | Path = (),
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> list[SessionReport]:
    """Import Codex rollouts; return one report per rollout file.

    `paths`: rollout files and folders (searched at any depth for `rollout-*.jsonl`); none:
    `$CODEX_HOME/sessions`, else `~/.codex/sessions`. `dry_run` computes the reports without
    writing. `progress(done, total)` counts bytes of the rollouts. Raises CodexImportError for
    a path that does not exist.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files = find_rollouts(paths)
    rollouts = Rollouts([*base_folders(paths, files), default_folder()])
    sizes = [_size(path) for path in files]
    done = 0
    if progress:
        progress(0, sum(sizes))
    reports: list[SessionReport] = []
    for path, size in zip(files, sizes, strict=True):
        reports.append(_import_file(store, path, rollouts, dry_run))
        done += size
        if progress:
            progress(done, sum(sizes))
    return reports


def _import_file(
    store: TranscriptStore, path: Path, rollouts: Rollouts, dry_run: bool
) -> SessionReport:
    try:
        rollout = read_rollout(path)
        plan = plan_rollout(rollout, rollouts.bases(rollout))
    except OSError as error:
        return SessionReport(str(path), None, "unreadable", notes=[f"cannot read: {error}"])
    except NotARollout as error:
        return SessionReport(str(path), None, "unreadable", notes=[str(error)])
    except MissingBase as error:
        session_id = error.session_id if isinstance(error.session_id, str) else None
        return SessionReport(str(path), session_id, "unreadable", notes=[str(error)])
    position = _position(store, plan)
    if not dry_run and position.report.status in ("imported", "doubtful"):
        _write(store, plan, position)
    return position.report


@dataclass
class _Position:
    """Where the store stands in a rollout's plan."""

    exists: bool
    done: int  # steps stored already
    report: SessionReport


def _position(store: TranscriptStore, plan: SessionPlan) -> _Position:
    notes = list(plan.notes)
    try:
        events = store.events(plan.session_id)
    except SessionNotFoundError:
        events = []
    diverged: tuple[int, str] | None = None
    if events and events[0]["type"] == "Erased":  # importing it again would undo the forget
        notes.append(f"erased at {events[0]['at']:%Y-%m-%d %H:%M:%S} UTC: not imported again")
    elif events:
        notes += _started_notes(plan, events[0]["data"])
        diverged = _divergence(plan, events)
    stored = max(len(events) - 1, 0)
    if diverged is not None:
        status: Status = "diverged"
        notes.insert(0, diverged[1])
    elif events and (events[0]["type"] == "Erased" or stored == len(plan.steps)):
        status = "unchanged"
    else:
        status = "doubtful" if plan.doubts else "imported"
        if stored:
            notes.append(f"resumed after the {stored} events stored by an earlier import")
    report = SessionReport(
        path=str(plan.path),
        session_id=plan.session_id,
        status=status,
        messages=plan.messages,
        active=len(plan.active),
        compactions_committed=plan.committed,
        compactions_failed=plan.failed,
        diverged_at_line=diverged[0] if diverged else None,
        notes=notes + plan.doubts,
    )
    return _Position(bool(events), stored, report)


def _started_notes(plan: SessionPlan, started: dict[str, Any]) -> list[str]:
    if (started["model"], started["metadata"]) == (plan.model, plan.metadata):
        return []
    return [
        "the session's model or metadata differ from the first import's (the store keeps "
        "the first import's: it has no event to update them)"
    ]


def _divergence(plan: SessionPlan, events: list[dict[str, Any]]) -> tuple[int, str] | None:
    """(the first line of the file that disagrees with the store, what disagrees), if any."""
    started = events[0]["data"]
    if (started["source"], started["parent_id"]) != (SOURCE, plan.parent_id):
        return 1, (
            f"the store holds session {plan.session_id!r} from source "
            f"{started['source']!r} with parent {started['parent_id']!r}, not an import of "
            "this rollout; nothing was written"
        )
    stored = events[1:]
    for event, step in zip(stored, plan.steps, strict=False):
        if not _matches(event, step):
            line = min(step.line, _line_of(event) or step.line)
            return line, (
                f"diverged from line {line}: the store holds {_described(event)} where the "
                f"file now has {_planned(step)} (line {step.line}); nothing was written"
            )
    if len(stored) > len(plan.steps):
        event = stored[len(plan.steps)]
        line = min(_line_of(event) or plan.whole_lines + 1, plan.whole_lines + 1)
        return line, (
            f"diverged from line {line}: the store holds {_described(event)} and more, which "
            f"the file (now {plan.whole_lines} whole lines) no longer has; nothing was written"
        )
    return None


def _matches(event: dict[str, Any], step: Step) -> bool:
    data = event["data"]
    if isinstance(step, Append):
        return (
            event["type"] == "MessageAppended"
            and data["message_id"] == step.message["id"]
            and data["content_hash"] == _content_hash(step.message)
        )
    if isinstance(step, Fail) or not step.commits:
        failure = WINDOW_EXCEEDED if isinstance(step, Fail) else ORPHANED_TOOL_RESULT
        return (
            event["type"] == "CompactionFailed"
            and data["reason"] == step.reason
            and data["failure"] == failure
        )
    added = [(m["id"], _content_hash(m)) for m in step.added]
    return (
        event["type"] == "CompactionCommitted"
        and data["reason"] == step.reason
        and data["replaced"] == len(step.snapshot)
        and data["order"] == [m if isinstance(m, str) else m["id"] for m in step.replacement]
        and [(new["id"], new["content_hash"]) for new in data["added"]] == added
        and data["tokens_before"] == step.tokens_before
        # a count Codex had not written yet when the compaction was first imported
        and data["tokens_after"] in (step.tokens_after, None)
    )


def _content_hash(message: dict[str, Any]) -> str:
    """The content hash the store gave a message the plan checked already."""
    return content_hash({key: value for key, value in message.items() if key != "id"})


def _line_of(event: dict[str, Any]) -> int | None:
    """The rollout line an imported event came from."""
    data = event["data"]
    if event["type"] == "MessageAppended":
        codex = data["message"].get(SOURCE)
        if not isinstance(codex, dict):
            return None
        if "session" in codex:  # a line of the session it forked from, named by line 1
            return 1
        return codex.get("line") if type(codex.get("line")) is int else None
    found = _REASON_LINE.search(str(data.get("reason", "")))
    return int(found.group(1)) if found else None


def _described(event: dict[str, Any]) -> str:
    data = event["data"]
    if event["type"] == "MessageAppended":
        return f"message {data['message_id']!r}"
    if event["type"] in ("CompactionCommitted", "CompactionFailed"):
        return f"{event['type']} ({data['reason'] or 'no reason'})"
    return f"a {event['type']} event"


def _planned(step: Step) -> str:
    if isinstance(step, Append):
        return f"message {step.message['id']!r}"
    outcome = (
        "CompactionCommitted" if isinstance(step, Compact) and step.commits else "CompactionFailed"
    )
    return f"{outcome} ({step.reason})"


def _write(store: TranscriptStore, plan: SessionPlan, at: _Position) -> None:
    session_id = plan.session_id
    if not at.exists:
        store.start(
            session_id,
            source=SOURCE,
            model=plan.model,
            parent_id=plan.parent_id,
            metadata=plan.metadata,
        )
    version = store.version(session_id)
    batch: list[dict[str, Any]] = []

    def flush() -> None:
        nonlocal version
        if batch:
            try:
                store.append(session_id, batch, expected_version=version)
            except VersionConflictError:
                raise _changed(session_id) from None
            version += len(batch)
            batch.clear()

    for step in plan.steps[at.done :]:
        if isinstance(step, Append):
            batch.append(step.message)
            if len(batch) >= _BATCH:
                flush()
            continue
        flush()
        version = _compact(store, session_id, step, version)
    flush()


def _compact(store: TranscriptStore, session_id: str, step: Compact | Fail, version: int) -> int:
    """Carry out a compaction step on the session at `version` (else nothing is written);
    return the session's version after it."""
    attempt = store.begin_compaction(session_id)
    if attempt.version != version or [m["id"] for m in attempt.messages] != step.snapshot:
        raise _changed(session_id)
    stored = {message["id"]: message for message in attempt.messages}
    if isinstance(step, Fail):
        asked = set(step.asked)
        written_since = [stored[m] for m in step.snapshot if m not in asked]
        result = store.fail_compaction(
            attempt,
            step.error,
            failure=WINDOW_EXCEEDED,
            reason=step.reason,
            replacement=written_since,  # the audit lists what the attempt was asked to cut
        )
        return result.version
    replacement = [stored[m] if isinstance(m, str) else m for m in step.replacement]
    result = store.commit_compaction(
        attempt,
        replacement,
        reason=step.reason,
        tokens_before=step.tokens_before,
        tokens_after=step.tokens_after,
    )
    if result.committed != step.commits:
        outcome = "committed" if result.committed else f"failed ({result.failure}: {result.error})"
        raise CodexImportError(
            f"session {session_id!r}: {step.reason} unexpectedly {outcome} in the store"
        )
    return result.version


def _changed(session_id: str) -> CodexImportError:
    return CodexImportError(
        f"session {session_id!r} changed in the store while it was imported (another "
        "writer?); import the rollout again to resume"
    )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
