"""The Hermes reader on every schema version from 11 to 31, each with the tables Hermes gives
a file of that version, and a clear error outside.

Where the tables come from: 11, 13, 16, 19 and 22 are the `CREATE TABLE` statements of the
files those releases wrote (tests/data/hermes: 0.13.0, 0.15.2, 0.17.0, 0.18.2, 0.19.0); a
version between two releases takes the older release's tables. Versions 23 to 30 have no
release: their tables are 0.19.0's plus what upstream's schema code adds (hermes_state_schema.py
and SCHEMA_SQL in NousResearch/hermes-agent: v23 moves full-text search to external-content
tables, which the importer never reads; v25 moves system prompts into `system_prompts`
keyed by `sessions.system_prompt_hash`; the reconciler adds `_compressed_summary` and the
display columns to `messages`). 31 is the synthetic schema-31 file's tables.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from support.hermes import DATA, SUMMARY, SYNTHETIC
from transcripts import TranscriptStore
from transcripts.adapters.importers.hermes import import_hermes

RELEASE_OF = {
    11: "0.13.0",
    13: "0.15.2",
    14: "0.16.0",
    16: "0.17.0",
    17: "0.18.0",
    19: "0.18.2",
    22: "0.19.0",
}
UPSTREAM_MESSAGES = (
    "_compressed_summary INTEGER NOT NULL DEFAULT 0",
    "display_kind TEXT",
    "display_metadata TEXT",
    "display_identity BLOB",
    "display_order INTEGER",
)
PROMPT = "You are Hermes, versioned."


def tables(source: Path) -> list[str]:
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as connection:
        found = connection.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN "
            "('schema_version', 'sessions', 'messages', 'system_prompts')"
        ).fetchall()
    connection.close()
    return [sql for (sql,) in found]


def hermes_file(path: Path, version: int) -> Path:
    """An empty state.db with the tables a file of `version` has."""
    if version == 31:
        statements = tables(SYNTHETIC)
    else:
        release = RELEASE_OF[max(v for v in RELEASE_OF if v <= min(version, 22))]
        statements = tables(DATA / release / "state.db")
    with sqlite3.connect(path) as connection:
        for sql in statements:
            connection.execute(sql)
        if 23 <= version <= 30:
            for column in UPSTREAM_MESSAGES:
                connection.execute(f"ALTER TABLE messages ADD COLUMN {column}")
        if 25 <= version <= 30:
            connection.execute("ALTER TABLE sessions ADD COLUMN system_prompt_hash TEXT")
            connection.execute(
                "CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL)"
            )
        connection.execute("INSERT INTO schema_version VALUES (?)", (version,))
    connection.close()
    return path


def columns(path: Path, table: str) -> set[str]:
    with sqlite3.connect(path) as connection:
        found = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
    connection.close()
    return found


def write_session(path: Path) -> None:
    """One session: three turns, then a committed in-place compaction where the schema has
    the columns for it (its summary known by content where there is no flag)."""
    message_columns, session_columns = columns(path, "messages"), columns(path, "sessions")
    with sqlite3.connect(path) as connection:
        if "system_prompt_hash" in session_columns:
            connection.execute("INSERT INTO system_prompts VALUES ('h1', ?)", (PROMPT,))
            connection.execute(
                "INSERT INTO sessions (id, source, started_at, system_prompt_hash) "
                "VALUES ('s1', 'cli', 1, 'h1')"
            )
        else:
            connection.execute(
                "INSERT INTO sessions (id, source, started_at, system_prompt) "
                "VALUES ('s1', 'cli', 1, ?)",
                (PROMPT,),
            )
        rows = [
            ("user", f"turn {n}") if n % 2 == 0 else ("assistant", f"reply {n}") for n in range(6)
        ]
        for at, (role, text) in enumerate(rows):
            connection.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) "
                "VALUES ('s1', ?, ?, ?)",
                (role, text, at),
            )
        if {"active", "compacted"} <= message_columns:
            connection.execute("UPDATE messages SET active = 0, compacted = 1")
            copies = [("assistant", SUMMARY.format("turns 0-3")), *rows[4:]]
            for at, (role, text) in enumerate(copies, start=10):
                connection.execute(
                    "INSERT INTO messages (session_id, role, content, timestamp) "
                    "VALUES ('s1', ?, ?, ?)",
                    (role, text, at),
                )
    connection.close()


@pytest.mark.parametrize("version", range(11, 32))
def test_every_schema_version_from_11_to_31_is_read(
    sqlite_url: str, tmp_path: Path, version: int
) -> None:
    path = hermes_file(tmp_path / "state.db", version)
    write_session(path)
    in_place = {"active", "compacted"} <= columns(path, "messages")
    with TranscriptStore.open(sqlite_url) as store:
        (report,) = import_hermes(store, path)
        contents = [m["content"] for m in store.active("s1")]
        (session,) = store.sessions()
    assert session["metadata"]["system_prompt"] == PROMPT
    assert report.status == "imported"
    if in_place:
        assert contents == [SUMMARY.format("turns 0-3"), "turn 4", "reply 5"]
        assert (report.messages, report.compactions_committed) == (7, 1)
    else:
        assert contents == ["turn 0", "reply 1", "turn 2", "reply 3", "turn 4", "reply 5"]


def test_in_place_compaction_columns_arrive_with_schema_19() -> None:
    assert "compacted" not in columns(DATA / "0.17.0" / "state.db", "messages")
    assert "active" in columns(DATA / "0.17.0" / "state.db", "messages")
    assert "active" not in columns(DATA / "0.15.2" / "state.db", "messages")
    assert {"active", "compacted"} <= columns(DATA / "0.18.2" / "state.db", "messages")
