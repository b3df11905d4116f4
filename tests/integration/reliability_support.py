"""Helpers of the reliability tests (tests/integration/test_reliability_*.py).

Self-contained on purpose: plain sqlite3 or psycopg on a store's database (the tables are
the documented ones: the log `stored_events` on SQLite, `transcripts_events` on PostgreSQL,
and the view tables), the command line through click's CliRunner, and a snapshot of
everything a reader can see of a store, to check that a refused call changed nothing.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from transcripts import TranscriptError, TranscriptStore

POSTGRES_VARIABLE = "TRANSCRIPTS_TEST_POSTGRES_URL"
POSTGRES_SERVER = os.environ.get(POSTGRES_VARIABLE)
DURABLE_BACKENDS = ["sqlite", *(["postgres"] if POSTGRES_SERVER else [])]

SQLITE_EVENTS = "stored_events"
POSTGRES_EVENTS = "transcripts_events"
VIEW_TABLES = {
    "sessions": "session_id",
    "active_messages": "session_id, position",
    "message_history": "session_id, seq",
    "compaction_attempts": "compaction_id",
    "quarantined_events": "position",
    "view_versions": "view",
}


def is_postgres(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def is_sqlite_file(url: str) -> bool:
    return url.startswith("sqlite:///")


def sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


def transcript_hex(session_id: str) -> str:
    """The originator id of a session's events, as SQLite stores it (hex text)."""
    from transcripts.domain.transcript import transcript_id

    return transcript_id(session_id).hex


def transcript_uuid(session_id: str) -> uuid.UUID:
    from transcripts.domain.transcript import transcript_id

    return transcript_id(session_id)


# -- plain SQL -----------------------------------------------------------------------------


@contextmanager
def sqlite_connection(url: str) -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(sqlite_path(url), timeout=30)) as connection:
        with connection:
            yield connection


def postgres_connection(url: str, **kwargs: Any) -> Any:
    import psycopg
    from transcripts import StoreConfig

    location = StoreConfig.from_url(url).location
    assert location is not None, url
    return psycopg.connect(**location.connection_kwargs(), autocommit=True, **kwargs)


def sql(url: str, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """One statement on a store's database, `?` placeholders on both backends; its rows."""
    if is_postgres(url):
        with postgres_connection(url) as connection:
            cursor = connection.execute(statement.replace("?", "%s"), params)
            return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
    with sqlite_connection(url) as connection:
        return connection.execute(statement, params).fetchall()


def events_table(url: str) -> str:
    return POSTGRES_EVENTS if is_postgres(url) else SQLITE_EVENTS


def log_rows(url: str) -> list[tuple[Any, ...]]:
    """The stored log as it is: (originator id, version, topic, state), in log order."""
    position = "notification_id" if is_postgres(url) else "rowid"
    rows = sql(
        url,
        f"SELECT originator_id, originator_version, topic, state FROM {events_table(url)} "
        f"ORDER BY {position}",
    )
    return [(str(o), v, t, bytes(s)) for o, v, t, s in rows]


def session_log(url: str, session_id: str) -> list[tuple[int, str, bytes]]:
    """(version, topic, state) of a session's stored events."""
    key: Any = str(transcript_uuid(session_id)) if is_postgres(url) else transcript_hex(session_id)
    rows = sql(
        url,
        f"SELECT originator_version, topic, state FROM {events_table(url)} "
        "WHERE originator_id = ? ORDER BY originator_version",
        (key,),
    )
    return [(v, t, bytes(s)) for v, t, s in rows]


def corrupt_event(
    url: str,
    session_id: str,
    version: int,
    *,
    state: bytes | None = None,
    topic: str | None = None,
) -> None:
    """Damage one stored event of a session in place with plain SQL."""
    key: Any = str(transcript_uuid(session_id)) if is_postgres(url) else transcript_hex(session_id)
    assignments, params = [], []
    if state is not None:
        assignments.append("state = ?")
        params.append(state)
    if topic is not None:
        assignments.append("topic = ?")
        params.append(topic)
    assert assignments
    if is_postgres(url):
        # The library's PostgreSQL recorder keeps the originator id as a uuid.
        sql(
            url,
            f"UPDATE {POSTGRES_EVENTS} SET {', '.join(assignments)} "
            "WHERE originator_id = ?::uuid AND originator_version = ?",
            (*params, key, version),
        )
    else:
        sql(
            url,
            f"UPDATE {SQLITE_EVENTS} SET {', '.join(assignments)} "
            "WHERE originator_id = ? AND originator_version = ?",
            (*params, key, version),
        )
    assert session_log(url, session_id)[version - 1][0] == version


def view_rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every view table, as the driver returns them."""
    return {
        table: [tuple(row) for row in sql(url, f"SELECT * FROM {table} ORDER BY {key}")]
        for table, key in VIEW_TABLES.items()
    }


def table_names(url: str) -> set[str]:
    if is_postgres(url):
        rows = sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    else:
        rows = sql(url, "SELECT name FROM sqlite_master WHERE type = 'table'")
    return {name for (name,) in rows}


# -- what readers see ----------------------------------------------------------------------


def seen(store: TranscriptStore) -> dict[str, Any]:
    """Everything the public queries return for every session (erased ones: their row)."""
    sessions = store.sessions()
    out: dict[str, Any] = {"sessions": sessions}
    for session in sessions:
        sid = session["id"]
        if session["erased_at"] is not None:
            out[sid] = {"events": store.events(sid)}
            continue
        out[sid] = {
            "active": store.active(sid),
            "history": store.history(sid),
            "compactions": store.compactions(sid),
            "events": store.events(sid),
        }
    return out


def search_available(store: TranscriptStore) -> bool:
    return store.config.cipher_key is None


# -- the command line ----------------------------------------------------------------------


def run_cli(url: str, *args: str, input: str | None = None) -> Result:
    """The command line on a store: run_cli(url, "export", "trip"). Exceptions propagate
    (a traceback is a bug: the CLI must turn every error into one line)."""
    from transcripts.adapters.cli import cli

    runner = CliRunner(env={"COLUMNS": "120", "NO_COLOR": "1"})
    return runner.invoke(
        cli,
        ["--db", url, *args],
        input=input,
        catch_exceptions=False,
        prog_name="transcripts",
    )


def error_line(result: Result) -> str:
    """The one line a failed command printed on stderr, exit status 1."""
    assert result.exit_code == 1, (result.exit_code, result.output, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def exported(url: str, session_id: str, *, history: bool = False) -> list[dict[str, Any]]:
    """The messages `transcripts export SESSION` (JSONL) prints."""
    import json

    result = run_cli(url, "export", session_id, *(["--history"] if history else []))
    assert result.exit_code == 0, (result.output, result.stderr)
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


# -- fixtures' building blocks ----------------------------------------------------------------


def durable_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A fresh store URL on a backend that keeps its data in a database other connections
    can reach (a SQLite file, a PostgreSQL database)."""
    if backend == "postgres":
        return request.getfixturevalue("postgres_url")
    return f"sqlite:///{tmp_path / 'store.db'}"


def raises_typed(call: Any, error: type[BaseException] = TranscriptError) -> BaseException:
    """Run `call()`; it must raise `error` (a TranscriptError subclass); return it."""
    with pytest.raises(error) as raised:
        call()
    return raised.value
