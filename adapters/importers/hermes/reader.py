"""Reading a Hermes agent `state.db` into plain values, read-only.

The file is opened with SQLite's `mode=ro` and never written. A WAL-mode file with no `-wal`
beside it (no Hermes process has it open) is opened `immutable=1` as well, because a
read-only connection to a WAL database would otherwise leave `-wal`/`-shm` files behind.

Schema versions 11 to 31 are read (`SUPPORTED_SCHEMA_VERSIONS`). Hermes adds columns by
reconciling its tables with the code that opens them, so which columns a file has depends on
the release that last opened it, not only on its version: every column is read if present
and treated as absent otherwise (no `active`: every row live; no `compacted`: nothing
archived; no `_compressed_summary`: a summary is known by its content; no
`system_prompt_hash`: the prompt is the `system_prompt` column). Only `sessions` (id,
source, started_at) and `messages` (id, session_id, role, content, timestamp) are required.
Rows come back decoded (see `rows`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .... import TranscriptError
from .rows import JSON_COLUMNS, HermesRow, TooDeep, decode_json, decode_row

SUPPORTED_SCHEMA_VERSIONS = frozenset(range(11, 32))

REQUIRED_COLUMNS = {
    "sessions": {"id", "source", "started_at"},
    "messages": {"id", "session_id", "role", "content", "timestamp"},
}
TOKEN_COLUMNS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_read_tokens": "cache_read",
    "cache_write_tokens": "cache_write",
    "reasoning_tokens": "reasoning",
}
TOP_LEVEL = ("title", "end_reason", "started_at", "ended_at", "last_activity_at")
STARTED_FIELDS = frozenset({"id", "source", "model", "parent_session_id", "system_prompt"})


class HermesImportError(TranscriptError):
    """The file is not a Hermes store, or of a schema version this importer does not read."""


@dataclass(frozen=True)
class HermesSession:
    id: str
    source: str
    model: str | None
    parent_id: str | None
    metadata: dict[str, Any]
    rows: list[HermesRow]  # conversation rows in id order (no session_meta rows)
    row_count: int  # every row of the session, session_meta included
    last_compression_error: str | None = None
    problems: list[str] = field(default_factory=list)
    # Identities of the parent's first conversation rows: a rotation child's handoff repeats
    # them before its summary.
    parent_head: list[str] = field(default_factory=list)


class HermesFile:
    """An open Hermes `state.db`. Use as a context manager."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._connection = _connect_read_only(self.path)
        try:
            self.schema_version = _check_schema(self._connection, self.path)
        except BaseException:
            self._connection.close()
            raise
        self._prompts: dict[str, str] | None = None

    def __enter__(self) -> HermesFile:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._connection.close()

    def row_count(self) -> int:
        """Message rows of the sessions (rows of a session missing from `sessions` excluded)."""
        sql = "SELECT count(*) FROM messages WHERE session_id IN (SELECT id FROM sessions)"
        return self._query(sql)[0][0]

    def session_ids(self) -> list[str]:
        """Every session, parents before their children, then by start time (a chain of any
        length, walked without recursion; a parent cycle is broken where it closes)."""
        rows = self._query("SELECT id, parent_session_id FROM sessions ORDER BY started_at, id")
        for row in rows:
            if not isinstance(row["id"], str) or not row["id"]:
                raise HermesImportError(
                    f"{self.path} is not a valid Hermes store: a sessions row has the id "
                    f"{row['id']!r}; nothing was imported"
                )
        parents = {row["id"]: row["parent_session_id"] for row in rows}
        ordered: list[str] = []
        placed: set[str] = set()
        for session_id in parents:
            chain: list[str] = []  # the session and its unplaced ancestors, child first
            current: str | None = session_id
            while current in parents and current not in placed and current not in chain:
                chain.append(current)
                current = parents[current]
            for link in reversed(chain):
                placed.add(link)
                ordered.append(link)
        return ordered

    def session(self, session_id: str) -> HermesSession:
        row = self._query("SELECT * FROM sessions WHERE id = ?", (session_id,))[0]
        columns = {key: row[key] for key in row.keys() if row[key] is not None}
        problems: list[str] = []
        metadata = self._session_metadata(columns, problems)
        rows: list[HermesRow] = []
        meta_rows: list[dict[str, Any]] = []
        count = 0
        for message_row in self._query(
            "SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
        ):
            count += 1
            decoded = self._decode(message_row)
            if decoded.message.get("role") == "session_meta":
                entry = {k: v for k, v in decoded.message.items() if k != "role"}
                meta_rows.append({"row": decoded.row_id, **entry})
                problems.extend(decoded.problems)
            else:
                rows.append(decoded)
        if meta_rows:
            metadata["session_meta"] = meta_rows
        parent_id = columns.get("parent_session_id")
        return HermesSession(
            id=session_id,
            source=str(columns.get("source", "hermes")),
            model=columns.get("model"),
            parent_id=columns.get("parent_session_id"),
            metadata=metadata,
            rows=rows,
            row_count=count,
            last_compression_error=columns.get("compression_failure_error"),
            problems=problems,
            parent_head=self._first_rows(parent_id) if parent_id else [],
        )

    def _first_rows(self, session_id: str, count: int = 16) -> list[str]:
        rows = self._query(
            "SELECT * FROM messages WHERE session_id = ? AND role != 'session_meta' "
            "ORDER BY id LIMIT ?",
            (session_id, count),
        )
        return [self._decode(row).identity for row in rows]

    def _decode(self, row: sqlite3.Row) -> HermesRow:
        try:
            return decode_row(row)
        except TooDeep as error:
            raise self._too_deep(error) from None

    def _too_deep(self, error: TooDeep) -> HermesImportError:
        return HermesImportError(
            f"{self.path}: {error}, deeper than a message may be; nothing was imported"
        )

    def _session_metadata(self, columns: dict[str, Any], problems: list[str]) -> dict[str, Any]:
        metadata: dict[str, Any] = {key: columns[key] for key in TOP_LEVEL if key in columns}
        tokens = {name: columns[key] for key, name in TOKEN_COLUMNS.items() if key in columns}
        if tokens:
            metadata["tokens"] = tokens
        prompt = columns.get("system_prompt") or self._system_prompt(
            columns.get("system_prompt_hash")
        )
        if prompt is not None:
            metadata["system_prompt"] = prompt
        hermes: dict[str, Any] = {}
        for key, value in columns.items():
            if key in STARTED_FIELDS or key in TOKEN_COLUMNS or key in TOP_LEVEL:
                continue
            if isinstance(value, bytes):
                problems.append(f"session column {key} holds binary data; not imported")
                continue
            try:
                hermes[key] = decode_json(value)[0] if key in JSON_COLUMNS else value
            except TooDeep as error:
                raise self._too_deep(TooDeep(f"the session's {key} is {error}")) from None
        metadata["hermes"] = hermes
        return metadata

    def _system_prompt(self, digest: str | None) -> str | None:
        if digest is None:
            return None
        if self._prompts is None:
            try:
                rows = self._query("SELECT hash, prompt FROM system_prompts")
            except HermesImportError:
                rows = []
            self._prompts = {row["hash"]: row["prompt"] for row in rows}
        return self._prompts.get(digest)

    def _query(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        try:
            return self._connection.execute(sql, parameters).fetchall()
        except sqlite3.Error as error:
            raise HermesImportError(f"cannot read {self.path}: {error}") from error


def _connect_read_only(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise HermesImportError(f"{path}: no such file")
    try:
        with path.open("rb") as file:
            header = file.read(100)
    except OSError as error:
        raise HermesImportError(f"cannot read {path}: {error}") from error
    if not header.startswith(b"SQLite format 3\x00"):
        raise HermesImportError(f"{path} is not a Hermes store: not an SQLite database")
    uri = f"{path.resolve().as_uri()}?mode=ro"
    wal_mode = len(header) >= 20 and header[18] == 2
    if wal_mode and not path.with_name(path.name + "-wal").exists():
        uri += "&immutable=1"
    try:
        connection = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as error:
        raise HermesImportError(f"cannot open {path}: {error}") from error
    connection.row_factory = sqlite3.Row
    return connection


def _check_schema(connection: sqlite3.Connection, path: Path) -> int:
    try:
        tables = {
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        missing = {"schema_version", *REQUIRED_COLUMNS} - tables
        if missing:
            raise HermesImportError(
                f"{path} is not a Hermes store: it has no {', '.join(sorted(missing))} table"
            )
        versions = [row[0] for row in connection.execute("SELECT version FROM schema_version")]
        if len(versions) != 1 or type(versions[0]) is not int:
            raise HermesImportError(
                f"{path} is not a Hermes store: its schema_version is {versions}"
            )
        version = versions[0]
        if version not in SUPPORTED_SCHEMA_VERSIONS:
            raise HermesImportError(
                f"{path} is a Hermes store of schema version {version}, which this importer "
                f"does not read (it reads versions {min(SUPPORTED_SCHEMA_VERSIONS)} to "
                f"{max(SUPPORTED_SCHEMA_VERSIONS)})"
            )
        for table, required in REQUIRED_COLUMNS.items():
            columns = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
            if not required <= columns:
                lacking = ", ".join(sorted(required - columns))
                raise HermesImportError(
                    f"{path} is not a Hermes store: table {table} has no column {lacking}"
                )
    except sqlite3.DatabaseError as error:
        raise HermesImportError(f"{path} is not a Hermes store: {error}") from error
    return version
