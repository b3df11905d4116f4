"""The synchronous side of `TranscriptSessionStore`: the SDK's calls on a TranscriptStore.

`append` keeps the new entries (`entries`) and projects the session's records the way the
Claude Code importer does (its `Planner`, fed as entries come: a compaction boundary waits
for its summary), writing the new steps and the batch in the session's state in one `write`
fenced on the version it planned against (a failed `/compact` is recorded between two
writes). What was planned for a session is kept between calls while the session stays at
the version this object wrote (an append then costs what its entries do); a session another
writer changed is read and planned again from its entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from claude_agent_sdk import fold_session_summary

from transcripts import SessionNotFoundError, SetState, TranscriptError, TranscriptStore
from transcripts.adapters.importers.claude_code.plan import Planner
from transcripts.adapters.importers.claude_code.writing import standing, write_plan

from .entries import as_kept, batch_key, batches, kept_entries, new_entries, uuid_of
from .keys import key_metadata, store_session_id

SOURCE = "claude-agent-sdk"
SUMMARY = "claude_agent_sdk.summary"


@dataclass
class _Planned:
    """A session as this object last wrote it: its version, the planner fed with every
    entry kept, how many of its steps are stored, the batches and uuids kept, the summary."""

    version: int | None  # None: never started
    planner: Planner = field(default_factory=Planner)
    written: int | None = 0  # None: not counted yet (see `_read`)
    batches: int = 0
    uuids: set[str] = field(default_factory=set)
    summary: Any = None


class SdkSessions:
    """The SDK's sessions in one store."""

    def __init__(self, store: TranscriptStore) -> None:
        self.store = store
        self._planned: dict[str, _Planned] = {}

    def append(self, key: Mapping[str, Any], entries: list[Any]) -> None:
        if not entries:
            return
        session_id = store_session_id(key)
        planned = self._planned.pop(session_id, None)  # put back once written
        if planned is None or planned.version != self._version(session_id):
            planned = self._read(session_id)
        new = new_entries(planned.uuids, entries)
        if not new:
            self._planned[session_id] = planned
            return
        planner = planned.planner
        planner.feed(new)
        if planned.written is None:
            planned.written = self._stored_steps(session_id, planner)
        values: dict[str, Any] = {
            batch_key(planned.batches + 1): as_kept(new, set(planner.messages))
        }
        if not key.get("subpath"):
            planned.summary = values[SUMMARY] = _folded(planned.summary, key, new)
        start = self._start(key) if planned.version is None else None
        planned.version = write_plan(
            self.store, session_id, planner.plan, planned.written,
            start=start, then=[SetState(values)], version=planned.version,
        )  # fmt: skip
        planned.written = len(planner.plan.steps)
        planned.batches += 1
        planned.uuids |= {uuid for uuid in map(uuid_of, new) if uuid is not None}
        self._planned[session_id] = planned

    def load(self, key: Mapping[str, Any]) -> list[Any] | None:
        session_id = store_session_id(key)
        row = self._session(session_id)
        if row is None:
            return None
        return kept_entries(row["state"], self.store.history(session_id))

    def list_sessions(self, project_key: str) -> list[dict[str, Any]]:
        return [
            {"session_id": row["metadata"]["session_id"], "mtime": _mtime(row)}
            for row in self._rows(project_key)
            if row["metadata"]["subpath"] is None
        ]

    def list_session_summaries(self, project_key: str) -> list[dict[str, Any]]:
        found = []
        for row in self._rows(project_key):
            summary = row["state"].get(SUMMARY)
            if row["metadata"]["subpath"] is None and isinstance(summary, dict):
                found.append({**summary, "mtime": _mtime(row)})
        return found

    def list_subkeys(self, key: Mapping[str, Any]) -> list[str]:
        return [
            row["metadata"]["subpath"]
            for row in self._rows(key["project_key"], key["session_id"])
            if row["metadata"]["subpath"] is not None
        ]

    def delete(self, key: Mapping[str, Any]) -> None:
        if key.get("subpath"):
            doomed = [store_session_id(key)]
        else:
            doomed = [row["id"] for row in self._rows(key["project_key"], key["session_id"])]
        for session_id in doomed:
            self._planned.pop(session_id, None)
            if self._session(session_id) is not None:
                self.store.forget(session_id)

    # -- reading ---------------------------------------------------------------------------

    def _read(self, session_id: str) -> _Planned:
        """The session as stored: its entries planned again."""
        row = self._session(session_id)
        if row is None:
            return _Planned(version=None)
        kept = kept_entries(row["state"], self.store.history(session_id))
        planned = _Planned(
            version=row["version"],
            batches=len(batches(row["state"])),
            uuids={uuid for uuid in map(uuid_of, kept) if uuid is not None},
            summary=row["state"].get(SUMMARY),
        )
        planned.planner.feed(kept)
        at = standing(self.store, session_id, planned.planner.plan)
        if at.diverged:
            raise TranscriptError(
                f"session {session_id!r} diverged from its entries: {at.diverged}"
            )
        planned.written = at.done
        return planned

    def _version(self, session_id: str) -> int | None:
        try:
            return self.store.version(session_id)
        except SessionNotFoundError:
            return None

    def _session(self, session_id: str) -> dict[str, Any] | None:
        """The session's `sessions()` entry; None if never written or erased."""
        try:
            row = self.store.session(session_id)
        except SessionNotFoundError:
            return None
        return None if row["erased_at"] is not None else row

    def _rows(self, project_key: str, session_id: str | None = None) -> list[dict[str, Any]]:
        """The live sessions of a project (of one SDK session, if given)."""
        return [
            row
            for row in self.store.sessions(source=SOURCE)
            if row["erased_at"] is None
            and row["metadata"].get("project_key") == project_key
            and (session_id is None or row["metadata"].get("session_id") == session_id)
        ]

    def _start(self, key: Mapping[str, Any]) -> dict[str, Any]:
        parent = store_session_id({**key, "subpath": None}) if key.get("subpath") else None
        return {"source": SOURCE, "parent_id": parent, "metadata": key_metadata(key)}


def _folded(previous: Any, key: Mapping[str, Any], entries: list[Any]) -> dict[str, Any]:
    """The SDK's own summary of the session, folded over the new entries (its `data` is the
    SDK's: kept as it comes)."""
    prev = {**previous, "mtime": 0} if isinstance(previous, dict) else None
    folded = fold_session_summary(prev, dict(key), entries)  # type: ignore[arg-type]
    return {name: value for name, value in dict(folded).items() if name != "mtime"}


def _mtime(row: Mapping[str, Any]) -> int:
    """Epoch milliseconds of the session's last event: its last write."""
    at = row["last_event_at"]
    stamp = at if isinstance(at, datetime) else datetime.fromisoformat(str(at))
    return int(stamp.timestamp() * 1000)
