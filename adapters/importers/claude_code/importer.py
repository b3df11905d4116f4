"""Importing Claude Code sessions through the TranscriptStore API (see the package
docstring): one file at a time, read, planned (`plan`), compared with what the store holds,
then written (`writing`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .... import TranscriptStore
from .files import ClaudeCodeImportError, SessionFile, find_sessions, read_session, subagent_files
from .plan import SOURCE, Plan, plan_records, session_metadata
from .writing import standing, write_plan

Status = Literal["imported", "unchanged", "diverged"]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class SessionReport:
    """What importing one session file did (or would do, in a dry run).

    Counts describe the session as stored once imported: `messages` in its history,
    `active` in its context, compactions committed and failed, `duplicates_dropped` (copies
    of records already read). `status`: imported; unchanged (the store holds it already);
    diverged (the store holds another history for this session id: nothing written).
    """

    path: str
    session_id: str
    status: Status
    parent_id: str | None = None
    messages: int = 0
    active: int = 0
    compactions_committed: int = 0
    compactions_failed: int = 0
    duplicates_dropped: int = 0
    notes: list[str] = field(default_factory=list)


def import_claude_code(
    store: TranscriptStore,
    paths: Iterable[str | Path] | str | Path = (),
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> list[SessionReport]:
    """Import Claude Code sessions; return one report per session file (a subagent's after
    its session's).

    `paths`: session files, project folders or a `projects` folder; none:
    `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`. `dry_run` computes the reports
    without writing. `progress(done, total)` counts bytes. Raises ClaudeCodeImportError for
    a path that does not exist or a malformed file (naming file and line; nothing of that
    session is stored).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files = find_sessions(paths)
    sizes = [sum(_size(p) for p in [path, *subagent_files(path)]) for path in files]
    done = 0
    if progress:
        progress(0, sum(sizes))
    reports: list[SessionReport] = []
    for path, size in zip(files, sizes, strict=True):
        reports += _import_session(store, path, dry_run)
        done += size
        if progress:
            progress(done, sum(sizes))
    return reports


def _import_session(store: TranscriptStore, path: Path, dry_run: bool) -> list[SessionReport]:
    """The session of a file, then its subagents': all read and planned before any write."""
    main = read_session(path)
    session_id = _session_id(main)
    planned = [(main, session_id, None, _start(main, path.parent.name, None))]
    for sub_path in subagent_files(path):
        sub = read_session(sub_path)
        child_id = f"{session_id}:subagents/{sub_path.stem}"
        planned.append((sub, child_id, session_id, _start(sub, path.parent.name, session_id)))
    reports = []
    for read, sid, parent, start in planned:
        plan = plan_records([record for _, record in read.records])
        reports.append(_import_plan(store, read, sid, parent, start, plan, dry_run))
    return reports


def _import_plan(
    store: TranscriptStore,
    read: SessionFile,
    session_id: str,
    parent: str | None,
    start: dict[str, Any],
    plan: Plan,
    dry_run: bool,
) -> SessionReport:
    notes = [*read.notes, *plan.notes]
    if plan.duplicates:
        notes.append(
            f"{plan.duplicates} copies of records already read (claude-code#92089) stored once"
        )
    at = standing(store, session_id, plan)
    status: Status = "imported"
    if at.erased:
        status = "unchanged"
        notes.append("erased in the store: not imported again")
    elif at.diverged:
        status = "diverged"
        notes.insert(0, f"diverged at {at.diverged}; nothing was written")
    elif at.exists and at.done == len(plan.steps):
        status = "unchanged"
    elif at.done:
        notes.append(f"resumed after the {at.done} steps stored by an earlier import")
    if at.exists and not at.erased:
        notes += _metadata_notes(store.session(session_id), start)
    if status == "imported" and not dry_run:
        write_plan(store, session_id, plan, at.done, start=None if at.exists else start)
    return SessionReport(
        path=str(read.path),
        session_id=session_id,
        status=status,
        parent_id=parent,
        messages=plan.messages,
        active=len(plan.active),
        compactions_committed=plan.committed,
        compactions_failed=plan.failed,
        duplicates_dropped=plan.duplicates,
        notes=notes,
    )


def _metadata_notes(stored: dict[str, Any], start: dict[str, Any]) -> list[str]:
    if (stored["model"], stored["metadata"]) == (start["model"], start["metadata"]):
        return []
    return [
        "the session's model or metadata differ from the first import's (the store keeps "
        "the first import's: it has no event to update them)"
    ]


def _session_id(read: SessionFile) -> str:
    for _, record in read.records:
        if isinstance(record.get("sessionId"), str) and record["sessionId"]:
            return record["sessionId"]
    return read.path.stem


def _start(read: SessionFile, project: str, parent: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "project": project,
        **session_metadata([record for _, record in read.records]),
    }
    if read.meta is not None:
        metadata["subagent"] = read.meta
        metadata["tool_use_id"] = read.meta.get("toolUseId")
    models = [
        r["message"].get("model")
        for _, r in read.records
        if r.get("type") == "assistant" and isinstance(r.get("message"), dict)
    ]
    model = next((m for m in models if isinstance(m, str)), None)
    return {"source": SOURCE, "model": model, "parent_id": parent, "metadata": metadata}


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


__all__ = ["ClaudeCodeImportError", "SessionReport", "import_claude_code"]
