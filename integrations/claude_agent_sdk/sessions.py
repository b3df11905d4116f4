"""The synchronous side of `TranscriptSessionStore`: the SDK's calls on a TranscriptStore.

`append` keeps the new entries (`entries`) and projects the session's records the way the
Claude Code importer does (`plan_records`, not final: a compaction boundary waits for its
summary), writing the steps not stored yet and the batch in the session's state in one
`write` fenced on the version it read (a failed `/compact` is recorded between two writes).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from claude_agent_sdk import fold_session_summary
from transcripts import SessionNotFoundError, SetState, TranscriptError, TranscriptStore
from transcripts.adapters.importers.claude_code.plan import Append, Compact, plan_records
from transcripts.adapters.importers.claude_code.writing import standing, write_plan

from .entries import as_kept, batch_key, batches, kept_entries, new_entries
from .keys import key_metadata, store_session_id

SOURCE = "claude-agent-sdk"
SUMMARY = "claude_agent_sdk.summary"


class SdkSessions:
    """The SDK's sessions in one store."""

    def __init__(self, store: TranscriptStore) -> None:
        self.store = store

    def append(self, key: Mapping[str, Any], entries: list[Any]) -> None:
        if not entries:
            return
        session_id = store_session_id(key)
        row = self._session(session_id)
        state = row["state"] if row else {}
        kept = kept_entries(state, self.store.history(session_id)) if row else []
        new = new_entries(kept, entries)
        if not new:
            return
        plan = plan_records([*kept, *new], final=False)
        at = standing(self.store, session_id, plan)
        if at.diverged:
            raise TranscriptError(
                f"session {session_id!r} diverged from its entries: {at.diverged}"
            )
        ids = {s.message["id"] for s in plan.steps if isinstance(s, Append)}
        ids |= {s.summary["id"] for s in plan.steps if isinstance(s, Compact) and s.summary}
        values: dict[str, Any] = {batch_key(len(batches(state)) + 1): as_kept(new, ids)}
        if not key.get("subpath"):
            values[SUMMARY] = _folded(state.get(SUMMARY), key, new)
        start = None if row else self._start(key)
        write_plan(self.store, session_id, plan, at.done, start=start, then=[SetState(values)])

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
            if self._session(session_id) is not None:
                self.store.forget(session_id)

    # -- reading ---------------------------------------------------------------------------

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
