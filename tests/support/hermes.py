"""Hermes `state.db` stores for tests: the files real Hermes releases wrote and their truth
(tests/data/hermes), the synthetic schema-31 file, an empty store of a schema, and a session
written the way Hermes writes it, kept in memory (for the planner) or stored in a file (for
the importer), and the context a plan's steps leave."""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transcripts import TranscriptStore
from transcripts.adapters.importers.hermes.reader import HermesSession
from transcripts.adapters.importers.hermes.rows import decode_row
from transcripts.adapters.importers.hermes.steps import Append, Compact, Rewind, SessionPlan

DATA = Path(__file__).resolve().parents[1] / "data" / "hermes"
RELEASES = sorted(
    (path.name for path in DATA.iterdir() if (path / "truth.json").is_file()),
    key=lambda name: tuple(int(part) for part in name.split(".")),
)
SYNTHETIC = DATA / "synthetic_schema_31.db"  # synthetic: shaped after schema 31, no release
SUMMARY = "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted: {}"
# A summary the compressor merged into the first tail message: its content, then the summary.
MERGED = (
    "[PRIOR CONTEXT — for reference only; not a new message]\n{}\n\n"
    "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]\n\n{}"
)
# The columns Hermes copies when it re-inserts a row it carries past a compaction.
COPIED = ("role", "content", "tool_call_id", "tool_calls", "tool_name")


@dataclass(frozen=True)
class Release:
    """A state.db a Hermes release wrote, and what the generator recorded while it did."""

    version: str
    path: Path
    truth: dict[str, Any]

    @classmethod
    def load(cls, version: str) -> Release:
        folder = DATA / version
        return cls(version, folder / "state.db", json.loads((folder / "truth.json").read_text()))

    @property
    def sessions(self) -> dict[str, dict[str, Any]]:
        return self.truth["sessions"]

    def row(self, row_id: int) -> dict[str, Any]:
        return self.truth["rows"][str(row_id)]

    def rows_of(self, session_id: str) -> list[tuple[int, dict[str, Any]]]:
        """The session's rows in id order, with what each is."""
        rows = [(int(row), entry) for row, entry in self.truth["rows"].items()]
        return sorted((row, entry) for row, entry in rows if entry["session"] == session_id)

    def copies_dropped(self, session_id: str) -> int:
        """Rows the import leaves out: copies a failed commit's flush wrote, and every row of
        a summary that never committed."""
        rows = [entry for _, entry in self.rows_of(session_id)]
        copies = [e for e in rows if e.get("copy") and e["write"] == "flush" and "summary" not in e]
        failed = [e for e in rows if e.get("summary_is") == "failed"]
        first = {e["summary"] for e in failed}
        return len(copies) + len(failed) - len(first)

    def truth_of(self, store: TranscriptStore, session_id: str, message_id: str) -> str:
        """The truth id of a stored message: the real message its row is, or the summary."""
        prefix = f"hermes-{session_id}-"
        if message_id.startswith(prefix):
            row_part, _, part = message_id.removeprefix(prefix).partition(":")
            entry = self.row(int(row_part))
            return (
                entry["summary"]
                if part == "summary" or "message" not in entry
                else entry["message"]
            )
        for attempt in store.compactions(session_id):
            if message_id in attempt["added"]:
                return self.row(int(attempt["reason"].rsplit(" ", 1)[1].rstrip(")")))["summary"]
        raise AssertionError(f"{message_id} is neither a Hermes row nor a compaction's summary")


def make_hermes(path: Path, version: int = 31, source: Path = SYNTHETIC) -> Path:
    """An empty Hermes store of `source`'s schema (its tables, none of its rows)."""
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as fixture:
        tables = dict(
            fixture.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN "
                "('schema_version', 'sessions', 'messages', 'system_prompts')"
            ).fetchall()
        )
    fixture.close()
    with sqlite3.connect(path) as connection:
        for sql in tables.values():
            connection.execute(sql)
        connection.execute("INSERT INTO schema_version VALUES (?)", (version,))
    connection.close()
    return path


class HermesHistory:
    """The `messages` rows of one Hermes session, written as Hermes writes them: appended
    rows, each stamped with the time of its write; an in-place compaction archives every live
    row (`hide_tail`: hides the originals of its tail instead, as the synthetic schema-31 file
    shows) and re-inserts the head, a summary and the tail as new rows; a failed commit
    re-inserts them without archiving anything; a rewind hides the last live rows.

    The rows are column values, as Hermes stores them (row ids from 1). `session()` gives
    them decoded as the reader decodes them; `write(path)` stores them in a new `state.db`.
    """

    def __init__(self, session_id: str = "s1") -> None:
        self.session_id = session_id
        self.clock = itertools.count(1_800_000_000)
        self.rows: list[dict[str, Any]] = []
        self.copied: dict[int, int] = {}  # copy row id -> the row first holding its message
        self.undone: set[int] = set()  # messages (first rows) an undo took out of the live rows

    def say(self, role: str, content: str | None, **columns: Any) -> int:
        """Append a row; its id."""
        return self._insert(
            {"role": role, "content": content, "timestamp": next(self.clock), **columns}
        )

    def _insert(self, columns: dict[str, Any]) -> int:
        row_id = len(self.rows) + 1
        self.rows.append(
            {"id": row_id, "session_id": self.session_id, "active": 1, "compacted": 0, **columns}
        )
        return row_id

    def turns(self, n: int, prefix: str) -> list[int]:
        return [self.say(("user", "assistant")[i % 2], f"{prefix} {i}") for i in range(n)]

    def live(self) -> list[int]:
        return [row["id"] for row in self.rows if row["active"]]

    def compact(
        self, head: int, tail: int, text: str, *, commit: bool = True, hide_tail: bool = False
    ) -> int:
        """An in-place compaction carrying `head` and `tail` live rows; the summary's row id."""
        live = self.live()
        carried_head, carried_tail = live[:head], live[len(live) - tail :]
        if commit:
            for row_id in live:
                self.rows[row_id - 1] |= {"active": 0, "compacted": 1}
            for row_id in carried_tail if hide_tail else []:
                self.rows[row_id - 1]["compacted"] = 0
        # A commit's rows are one transaction, stamped 1 µs apart; a failed commit's flush
        # stamps each row when it writes it.
        start, burst = next(self.clock), itertools.count()

        def stamp() -> float:
            return start + next(burst) * 1e-6 if commit else next(self.clock)

        self.copy(carried_head, stamp)
        text = SUMMARY.format(text)
        summary = self._insert(
            {"role": "user", "content": text, "timestamp": stamp(), "_compressed_summary": 1}
        )
        self.copy(carried_tail, stamp)
        return summary

    def copy(self, rows: list[int], stamp: Callable[[], float] | None = None) -> None:
        for row_id in rows:
            original = self.rows[row_id - 1]
            copied = {key: original[key] for key in COPIED if key in original}
            when = stamp() if stamp else next(self.clock)  # stamped when written
            copy = self._insert({**copied, "timestamp": when})
            self.copied[copy] = self.copied.get(row_id, row_id)

    def rewind(self, n: int) -> list[int]:
        """/undo: hide the last `n` live rows; their ids. A message it hid is undone unless a
        live row still holds it (the original of a failed commit's copy), as the generator's
        truth records an undo (`tests/data/hermes/truth.py`)."""
        undone = self.live()[-n:]
        for row_id in undone:
            self.rows[row_id - 1] |= {"active": 0, "compacted": 0}
        live = {self.copied.get(row_id, row_id) for row_id in self.live()}
        self.undone |= {self.copied.get(row_id, row_id) for row_id in undone} - live
        return undone

    def session(self, **fields: Any) -> HermesSession:
        """The session as the reader gives it to the planner (`fields` override its columns)."""
        return HermesSession(
            **{
                "id": self.session_id,
                "source": "cli",
                "model": "m",
                "parent_id": None,
                "metadata": {},
                "rows": [decode_row(row) for row in self.rows],  # type: ignore[arg-type]
                "row_count": len(self.rows),
                **fields,
            }
        )

    def write(self, path: Path) -> Path:
        """A new Hermes store at `path` holding the session and its rows."""
        make_hermes(path)
        with sqlite3.connect(path) as connection:
            connection.execute(
                "INSERT INTO sessions (id, source, model, started_at) VALUES (?, 'cli', 'm', 1)",
                (self.session_id,),
            )
            for row in self.rows:
                names = ", ".join(row)
                marks = ", ".join("?" * len(row))
                connection.execute(
                    f"INSERT INTO messages ({names}) VALUES ({marks})", (*row.values(),)
                )
        connection.close()
        return path


def replayed(plan: SessionPlan) -> list[str]:
    """The active context a plan's steps leave (planned ids), checking on the way that each
    committing compaction is based on the context and each rewind takes out its tail."""
    active: list[str] = []
    for unit in plan.units:
        if isinstance(unit, Append):
            active.append(unit.message["id"])
        elif isinstance(unit, Compact) and unit.commits:
            assert active == unit.snapshot
            active = [m if isinstance(m, str) else str(unit.summary_id) for m in unit.replacement]
        elif isinstance(unit, Rewind):
            assert unit.message_ids and active[-len(unit.message_ids) :] == unit.message_ids
            del active[-len(unit.message_ids) :]
    assert len(active) == plan.active
    return active
