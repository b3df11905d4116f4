"""Importing a Hermes `state.db` through the TranscriptStore API (see the package docstring).

Two passes. The first plans every session (`plan`) and compares the plan with what
the store holds already, writing nothing: a session the store holds in full is
"unchanged", one it holds a prefix of (an earlier import, an interrupted one, or a Hermes
session that went on since) is resumed after that prefix, and one whose stored history
differs from the file stops the import before anything is written. The second pass writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from .... import SessionNotFoundError, TranscriptError, TranscriptStore
from ....domain.compaction import STORAGE_ERROR
from ....domain.messages import content_hash, split_id
from ....domain.sessions import check_start
from .plan import plan_session
from .reader import HermesFile, HermesImportError, HermesSession
from .steps import Append, Compact, Fail, Rewind, SessionPlan, Unit

Status = Literal["imported", "unchanged", "repaired", "doubtful"]
Progress = Callable[[int, int], None]

_BATCH = 500


@dataclass(frozen=True)
class SessionReport:
    """What importing one Hermes session did (or would do, in a dry run).

    Counts describe the session as stored once imported: `messages` in its history,
    `active` in its context, compactions committed and failed, `duplicates_dropped`, the
    source rows not imported because they are copies (of a message imported already, or of a
    summary that never committed), and `rewinds`, the Hermes undos stored as rewinds (none is
    a compaction). `status`: imported; repaired (failed commits found, every copy accounted
    for); doubtful (something the file cannot tell: the notes say what, and what was kept);
    unchanged (the store holds the session already).
    """

    session_id: str
    status: Status
    messages: int
    active: int
    compactions_committed: int
    compactions_failed: int
    duplicates_dropped: int
    rewinds: int
    notes: list[str] = field(default_factory=list)


def import_hermes(
    store: TranscriptStore,
    path: str | Path,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> list[SessionReport]:
    """Import every session of a Hermes `state.db`; return one report per session.

    `dry_run` computes the reports without writing. `progress(done, total)` counts source
    rows. Raises HermesImportError for a file that is not a Hermes store, of a schema version
    not read, or whose sessions the store holds with another history.
    """
    with HermesFile(path) as source:
        total = source.row_count()
        done = 0
        if progress:
            progress(0, total)
        planned: list[tuple[SessionReport, HermesSession, SessionPlan]] = []
        for session_id in source.session_ids():
            session = source.session(session_id)
            _check_storable(source.path, session)
            plan = plan_session(session)
            report = _resume_point(store, session, plan).report
            planned.append((report, replace(session, rows=[]), plan))  # its plan holds the rows
            if dry_run and progress:
                done += session.row_count
                progress(done, total)
        if not dry_run:
            for report, session, plan in planned:
                if report.status != "unchanged":
                    _write(store, session, plan, _resume_point(store, session, plan))
                if progress:
                    done += session.row_count
                    progress(done, total)
        return [report for report, _, _ in planned]


def _check_storable(path: Path, session: HermesSession) -> None:
    """The session can be started in the store (its id, source, model, parent and metadata),
    checked before anything of the file is stored."""
    started = (session.id, session.source, session.model, session.parent_id, session.metadata)
    try:
        check_start(*started)
    except TranscriptError as error:
        raise HermesImportError(
            f"{path}: session {session.id!r} cannot be stored ({error}); nothing was imported"
        ) from None


@dataclass
class _Resume:
    """Where the store stands in a session's plan."""

    exists: bool
    done: int  # units stored already
    ids: dict[str, str]  # planned summary id -> the id the store gave it
    report: SessionReport


def _resume_point(store: TranscriptStore, session: HermesSession, plan: SessionPlan) -> _Resume:
    notes = list(plan.notes)
    try:
        events = store.events(session.id)
    except SessionNotFoundError:
        events = []
    ids: dict[str, str] = {}
    erased = bool(events) and events[0]["type"] == "Erased"
    if erased:  # forgotten: importing it again would bring back what was erased
        notes.append(f"erased at {events[0]['at']:%Y-%m-%d %H:%M:%S} UTC: not imported again")
    elif events:
        notes += _check_started(session, events[0]["data"])
        stored = events[1:]
        matched = 0
        while matched < min(len(stored), len(plan.units)):
            if not _matches(stored[matched], plan.units[matched], ids):
                break
            matched += 1
        if matched < len(stored):
            raise HermesImportError(
                f"session {session.id!r} is in the store with another history than in the "
                f"Hermes file (from its event {matched + 2}, {stored[matched]['type']}); "
                "nothing was imported"
            )
        if 0 < len(stored) < len(plan.units):
            notes.append(f"resumed after the {len(stored)} events stored by an earlier import")
    done = max(len(events) - 1, 0)
    if erased or events and done == len(plan.units):
        status: Status = "unchanged"
    else:
        status = "doubtful" if plan.doubts else "repaired" if plan.repaired else "imported"
    report = SessionReport(
        session_id=session.id,
        status=status,
        messages=plan.messages,
        active=plan.active,
        compactions_committed=plan.committed,
        compactions_failed=plan.failed,
        duplicates_dropped=plan.duplicates_dropped,
        rewinds=plan.rewinds,
        notes=notes,
    )
    return _Resume(bool(events), done, ids, report)


def _check_started(session: HermesSession, started: dict[str, Any]) -> list[str]:
    if (started["source"], started["parent_id"]) != (session.source, session.parent_id):
        raise HermesImportError(
            f"session {session.id!r} is in the store with source {started['source']!r} and "
            f"parent {started['parent_id']!r}, not {session.source!r} and "
            f"{session.parent_id!r} as in the Hermes file; nothing was imported"
        )
    if (started["model"], started["metadata"]) != (session.model, session.metadata):
        return [
            "the Hermes session's model or metadata changed since it was first imported; "
            "the store keeps the first import's (it has no event to update them)"
        ]
    return []


def _matches(event: dict[str, Any], unit: Unit, ids: dict[str, str]) -> bool:
    data = event["data"]
    if isinstance(unit, Append):
        message_id, content = split_id(unit.message)
        return (
            event["type"] == "MessageAppended"
            and data["message_id"] == message_id
            and data["content_hash"] == content_hash(content)
        )
    if isinstance(unit, Rewind):
        return (
            event["type"] == "Rewound"
            and data["message_ids"] == [ids.get(m, m) for m in unit.message_ids]
            and data["reason"] == unit.reason
        )
    if isinstance(unit, Fail) or not unit.commits:
        return event["type"] == "CompactionFailed" and data["reason"] == unit.reason
    if event["type"] != "CompactionCommitted" or data["reason"] != unit.reason:
        return False
    superseded = {ids.get(m, m) for m in unit.superseded}
    kept = [m for m in (ids.get(m, m) for m in unit.snapshot) if m not in superseded]
    if data["replaced"] != len(unit.snapshot) or sorted(data["kept"]) != sorted(kept):
        return False  # a commit names its snapshot's length and what it kept of it
    if unit.summary_id is not None:
        if len(data["added"]) != 1:
            return False
        ids[unit.summary_id] = data["added"][0]["id"]
    return True


def _write(store: TranscriptStore, session: HermesSession, plan: SessionPlan, at: _Resume) -> None:
    if not at.exists:
        store.start(
            session.id,
            source=session.source,
            model=session.model,
            parent_id=session.parent_id,
            metadata=session.metadata,
        )
    batch: list[dict[str, Any]] = []
    for unit in plan.units[at.done :]:
        if isinstance(unit, Append):
            batch.append(unit.message)
            if len(batch) < _BATCH:
                continue
        if batch:
            store.append(session.id, batch)
            batch = []
        if isinstance(unit, Rewind):
            _rewind(store, session.id, unit, at.ids)
        elif not isinstance(unit, Append):
            _compact(store, session.id, unit, at.ids)
    if batch:
        store.append(session.id, batch)


def _compact(
    store: TranscriptStore, session_id: str, unit: Compact | Fail, ids: dict[str, str]
) -> None:
    attempt = store.begin_compaction(session_id)
    snapshot = [message["id"] for message in attempt.messages]
    if snapshot != [ids.get(m, m) for m in unit.snapshot]:
        raise _changed(session_id, unit.reason)
    stored = {message["id"]: message for message in attempt.messages}
    planned = unit.replacement
    replacement = (
        None
        if planned is None
        else [stored[ids.get(m, m)] if isinstance(m, str) else m for m in planned]
    )
    if isinstance(unit, Fail):
        store.fail_compaction(
            attempt, unit.error, failure=STORAGE_ERROR, reason=unit.reason, replacement=replacement
        )
        return
    result = store.commit_compaction(
        attempt,
        replacement,
        reason=unit.reason,
        tokens_before=unit.tokens_before,
        tokens_after=unit.tokens_after,
    )
    if result.committed != unit.commits:
        outcome = "committed" if result.committed else f"failed ({result.failure}: {result.error})"
        raise HermesImportError(
            f"session {session_id!r}: {unit.reason} unexpectedly {outcome} in the store"
        )
    if result.committed and unit.summary_id is not None:
        position = next(i for i, m in enumerate(unit.replacement) if not isinstance(m, str))
        ids[unit.summary_id] = result.messages[position]["id"]


def _rewind(store: TranscriptStore, session_id: str, unit: Rewind, ids: dict[str, str]) -> None:
    """Take the planned messages out; they must be the store's active tail, so that a
    rewind of that many takes out exactly them."""
    planned = [ids.get(m, m) for m in unit.message_ids]
    active = [message["id"] for message in store.active(session_id)]
    if active[max(len(active) - len(planned), 0) :] != planned:
        raise _changed(session_id, unit.reason)
    store.rewind(session_id, count=len(planned), reason=unit.reason)


def _changed(session_id: str, reason: str) -> HermesImportError:
    return HermesImportError(
        f"session {session_id!r} changed in the store while it was imported ({reason}); "
        "import the file again to resume"
    )
