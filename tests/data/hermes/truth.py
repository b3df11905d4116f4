"""The truth about every row Hermes writes, recorded while it writes them (for `generate.py`).

Hermes' own methods are wrapped, not replaced: each wrapper calls the real method and notes
what it wrote. Every message dict the agent makes gets a `_truth` key before Hermes writes it
(Hermes neither stores nor strips unknown keys; the compressor's copies keep it), so each new
row is known to be a real message written for the first time in its session, a copy of one,
or a compaction summary:

- `AIAgent._flush_messages_to_session_db` (the per-turn flush): the rows it adds are the
  dicts of `messages` it wrote, matched from the end (it writes the unwritten ones, in order);
- `AIAgent._compress_context`: one compaction attempt — the active context before it, what
  its result kept, its summary; committed, failed or a rotation;
- `SessionDB.archive_and_compact` (a committed in-place compaction; raises "database is
  locked" when the generator makes it fail, as Hermes' own test for hermes-agent#99477 does)
  and `SessionDB.replace_messages` (a rotation's handoff): their rows are their dicts;
- `SessionDB.rewind_to_message` (`/undo`): the rows it hides.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from hermes_state import SessionDB
from run_agent import AIAgent

SUMMARY_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]")
MERGED_PREFIX = "[PRIOR CONTEXT"


class Truth:
    """What the rows are; `tap()` starts recording."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.rows: dict[int, dict[str, Any]] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self.seen: set[tuple[str, str]] = set()
        self.count = 0
        self.fail_next_commit = False
        self.last_commit: str | None = None  # "committed" or "failed", set by the archive tap

    # -- reading the file ------------------------------------------------------------------

    def query(self, sql: str, *parameters: Any) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.db_path) as connection:
            rows = connection.execute(sql, parameters).fetchall()
        connection.close()
        return rows

    def last_row(self) -> int:
        return self.query("SELECT coalesce(max(id), 0) FROM messages")[0][0]

    def new_rows(self, after: int) -> list[tuple[int, str, str, Any]]:
        return self.query(
            "SELECT id, session_id, role, content FROM messages WHERE id > ? ORDER BY id", after
        )

    def live_rows(self, session_id: str) -> list[int]:
        columns = {row[1] for row in self.query("PRAGMA table_info(messages)")}
        live = " AND active = 1" if "active" in columns else ""
        sql = f"SELECT id FROM messages WHERE session_id = ?{live} ORDER BY id"
        return [row for (row,) in self.query(sql, session_id)]

    # -- what the rows are -----------------------------------------------------------------

    def session(self, session_id: str) -> dict[str, Any]:
        return self.sessions.setdefault(session_id, {"attempts": [], "rewinds": []})

    def mark(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """Give every message dict not marked yet its truth id (new messages)."""
        for message in messages:
            if isinstance(message, dict) and "_truth" not in message and not _summary(message):
                self.count += 1
                message["_truth"] = f"{session_id}/m{self.count}"

    def wrote(self, rows: list[tuple[Any, ...]], dicts: list[dict[str, Any]], how: str) -> None:
        """`rows` hold `dicts`, in order."""
        assert len(rows) == len(dicts), (how, [r[0] for r in rows], len(dicts))
        for (row, session_id, role, _), message in zip(rows, dicts, strict=True):
            assert role == message.get("role"), (how, row, role, message.get("role"))
            entry: dict[str, Any] = {"session": session_id, "write": how}
            if role == "session_meta":
                entry["session_meta"] = True
            if "_summary" in message:  # (summary id, "committed", "failed" or "handoff")
                entry["summary"], entry["summary_is"] = message["_summary"]
                if "_truth" in message:
                    entry["merged_into"] = message["_truth"]
            if "_truth" in message:
                entry["message"] = message["_truth"]
                entry["copy"] = (session_id, message["_truth"]) in self.seen
                self.seen.add((session_id, message["_truth"]))
            self.rows[row] = entry

    def ids_of(self, row: int) -> list[str]:
        """What a row holds in the context: a committed summary first, then its message."""
        entry = self.rows[row]
        ids = []
        if "summary" in entry and entry["summary_is"] != "failed":
            ids.append(entry["summary"])
        if "message" in entry:
            ids.append(entry["message"])
        return ids

    def active(self, session_id: str) -> list[str]:
        """The live rows' messages, once each, without uncommitted summaries."""
        ids = [m for row in self.live_rows(session_id) for m in self.ids_of(row)]
        return list(dict.fromkeys(ids))

    # -- recording -------------------------------------------------------------------------

    def tap(self) -> None:
        """Wrap Hermes' writing methods (once per process)."""
        truth = self
        flush = AIAgent._flush_messages_to_session_db
        compress = AIAgent._compress_context
        archive = getattr(SessionDB, "archive_and_compact", None)
        replace = SessionDB.replace_messages
        rewind = getattr(SessionDB, "rewind_to_message", None)

        def flushed(agent: AIAgent, messages: list[dict[str, Any]], *args: Any, **kw: Any) -> Any:
            truth.mark(agent.session_id, messages)
            before = truth.last_row()
            result = flush(agent, messages, *args, **kw)
            rows = truth.new_rows(before)
            truth.wrote(rows, _written(rows, messages), "flush")
            return result

        def compressed(
            agent: AIAgent, messages: list[dict[str, Any]], *args: Any, **kw: Any
        ) -> Any:
            session_id = agent.session_id
            truth.mark(session_id, messages)
            snapshot = truth.active(session_id)
            truth.last_commit = None
            result = compress(agent, messages, *args, **kw)
            after = result[0]
            assert after is not messages and len(after) < len(messages), "nothing compressed"
            rotated = agent.session_id != session_id
            kind = "rotate" if rotated else {"committed": "commit"}.get(truth.last_commit, "fail")
            state = truth.session(session_id)
            summary = f"{session_id}/summary{len(state['attempts']) + 1}"
            made = [m for m in after if _summary(m) and "_summary" not in m]  # this summary
            for message in made:
                message["_summary"] = (summary, _SUMMARY_IS[kind])
            merged = [m["_truth"] for m in made if "_truth" in m]
            kept = [m["_truth"] for m in after if m.get("_truth") in snapshot]
            state["attempts"].append(
                {
                    "kind": kind,
                    "summary": summary,
                    "merged_into": merged[0] if merged else None,
                    "snapshot": snapshot,
                    "kept": kept,
                    "superseded": [m for m in snapshot if m not in kept],
                    "error": "database is locked" if kind == "fail" else None,
                }
            )
            truth.pending_rows()
            if rotated:
                child = truth.session(agent.session_id)
                child["parent"], child["handoff"] = session_id, summary
            return result

        def archived(db: SessionDB, session_id: str, messages: list[dict[str, Any]]) -> Any:
            if truth.fail_next_commit:
                truth.fail_next_commit = False
                truth.last_commit = "failed"
                raise sqlite3.OperationalError("database is locked")
            truth.mark(session_id, messages)
            before = truth.last_row()
            result = archive(db, session_id, messages)
            truth.last_commit = "committed"
            truth.held = (truth.new_rows(before), messages, "archive_and_compact")
            return result

        def replaced(
            db: SessionDB, session_id: str, messages: list[dict[str, Any]], *a: Any, **kw: Any
        ) -> Any:
            truth.mark(session_id, messages)
            before = truth.last_row()
            result = replace(db, session_id, messages, *a, **kw)
            truth.held = (truth.new_rows(before), messages, "replace_messages")
            return result

        def rewound(db: SessionDB, session_id: str, target: int) -> Any:
            live, before = set(truth.live_rows(session_id)), truth.active(session_id)
            result = rewind(db, session_id, target)
            undone = sorted(live - set(truth.live_rows(session_id)))
            after = truth.active(session_id)
            gone = [m for m in before if m not in after]  # copies' messages may stay live
            truth.session(session_id)["rewinds"].append({"rows": undone, "messages": gone})
            return result

        self.held: tuple[list[Any], list[dict[str, Any]], str] | None = None
        AIAgent._flush_messages_to_session_db = flushed
        AIAgent._compress_context = compressed
        SessionDB.replace_messages = replaced
        if archive is not None:
            SessionDB.archive_and_compact = archived
        if rewind is not None:
            SessionDB.rewind_to_message = rewound

    def pending_rows(self) -> None:
        """Record the rows a commit or a handoff wrote, now that its summary is known."""
        if self.held is None:
            return
        rows, messages, how = self.held
        self.held = None
        self.wrote(rows, messages, how)

    # -- the file's truth ------------------------------------------------------------------

    def dump(self, path: Path, release: str, schema: int, scenarios: dict[str, str]) -> None:
        columns = ("source", "model", "parent_session_id", "title", "end_reason")
        found = self.query(f"SELECT id, {', '.join(columns)} FROM sessions")
        for session_id, *values in found:
            state = self.session(session_id)
            state.update(zip(columns, values, strict=True))
            state["history"] = self.history(session_id)
            state["active"] = self.active(session_id)
        data = {
            "hermes_version": release,
            "schema_version": schema,
            "scenarios": scenarios,
            "sessions": self.sessions,
            "rows": {str(row): entry for row, entry in sorted(self.rows.items())},
        }
        path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")

    def history(self, session_id: str) -> list[str]:
        """Its real messages and committed summaries, each once, in the order first written."""
        rows = [row for row, entry in sorted(self.rows.items()) if entry["session"] == session_id]
        return list(dict.fromkeys(m for row in rows for m in self.ids_of(row)))


_SUMMARY_IS = {"commit": "committed", "fail": "failed", "rotate": "handoff"}


def _summary(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, str) and content.startswith((*SUMMARY_PREFIXES, MERGED_PREFIX))


def _written(rows: list[tuple[Any, ...]], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The dicts a flush wrote as `rows`: matched by role and content from the end."""
    written: list[dict[str, Any]] = []
    position = len(messages)
    for _, _, role, content in reversed(rows):
        position -= 1
        while position >= 0 and not _same(messages[position], role, content):
            position -= 1
        assert position >= 0, ("a flushed row matches no message", role, content)
        written.append(messages[position])
    return written[::-1]


def _same(message: Any, role: str, content: Any) -> bool:
    if not isinstance(message, dict) or message.get("role") != role:
        return False
    text = message.get("content")
    return content == text or (isinstance(content, str) and content.strip() == str(text).strip())
