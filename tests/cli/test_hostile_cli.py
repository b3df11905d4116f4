"""Hostile and broken input through the command line (the corpus is tests/data/): one line on
stderr, exit status 1, and nothing already stored is lost or changed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from support.cli import Run, error_line
from support.corpus import (
    DATA,
    FTS5_QUERIES,
    JSONL_CASES,
    NOT_STORES,
    QUERIES,
    SESSION_IDS,
    copy,
)
from support.limits import READ_ONLY, limited, read_only
from support.rows import damage_event, log_rows, path_of
from transcripts import TranscriptStore
from transcripts.domain.messages import MAX_MESSAGE_BYTES

INVALID_QUERIES = {**QUERIES, **FTS5_QUERIES}  # a SQLite store refuses both


def assert_intact(url: str, rows: list[tuple[Any, ...]]) -> None:
    """The log is what it was, and the views agree with it."""
    assert log_rows(url) == rows
    with TranscriptStore.open(url) as store:
        assert store.verify_projections().ok


# -- files given to the commands --------------------------------------------------------------


@pytest.mark.parametrize("name", JSONL_CASES, ids=JSONL_CASES)
def test_importing_a_malformed_jsonl_file_is_one_line_naming_the_line_and_stores_nothing(
    run: Run, populated: str, tmp_path: Path, name: str
) -> None:
    rows = log_rows(populated)
    path = copy(f"jsonl/{name}", tmp_path)
    line = error_line(run("import", "jsonl", str(path)))
    assert line.startswith(f"Error: {path} line {JSONL_CASES[name]['line']}: ")
    assert JSONL_CASES[name]["says"] in line
    assert_intact(populated, rows)


def test_a_jsonl_line_over_the_size_limit_is_one_line_naming_the_limit(
    run: Run, populated: str, tmp_path: Path
) -> None:
    rows = log_rows(populated)
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"role": "tool", "content": "x" * MAX_MESSAGE_BYTES}) + "\n")
    line = error_line(run("import", "jsonl", str(path)))
    assert line.startswith(f"Error: {path} line 1: message is ")
    assert line.endswith("over the limit of 33,554,432 bytes (32 MiB)")
    assert_intact(populated, rows)


def test_an_error_about_a_file_whose_name_holds_a_line_break_is_still_one_line(
    run: Run, populated: str, tmp_path: Path
) -> None:
    path = tmp_path / "two\nlines.jsonl"
    path.write_text("not json\n")
    line = error_line(run("import", "jsonl", str(path)))
    assert line.startswith(f"Error: {tmp_path}/two lines.jsonl line 1: not valid JSON")


@pytest.mark.parametrize("name", NOT_STORES)
def test_a_file_that_is_not_a_store_given_as_db_is_one_line_and_left_untouched(
    run: Run, tmp_path: Path, name: str
) -> None:
    path = copy(f"stores/{name}", tmp_path)
    line = error_line(run("sessions", url=f"sqlite:///{path}"))
    assert line.startswith(f"Error: {path} is not a transcript store: ")
    assert path.read_bytes() == (DATA / "stores" / name).read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_importing_a_hermes_store_of_an_unknown_schema_version_is_one_line_and_imports_nothing(
    run: Run, populated: str, tmp_path: Path
) -> None:
    rows = log_rows(populated)
    path = copy("stores/hermes_schema_v99.db", tmp_path)
    assert error_line(run("import", "hermes", str(path))) == (
        f"Error: {path} is a Hermes store of schema version 99, which this importer does not "
        "read (it reads versions 11 to 31)"
    )
    assert path.read_bytes() == (DATA / "stores" / "hermes_schema_v99.db").read_bytes()
    assert_intact(populated, rows)


# -- session ids and search queries -----------------------------------------------------------


@pytest.fixture
def hostile(db: str) -> str:
    """A store with a session, one message and a compaction under every hostile id."""
    with TranscriptStore.open(db) as store:
        for session_id in SESSION_IDS.values():
            store.start(session_id, source="hostile")
            store.append(session_id, [{"id": session_id, "role": "user", "content": "needle"}])
            store.compact(session_id, lambda messages: [{"role": "system", "content": "sum"}])
    return db


def output(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("session_id", SESSION_IDS.values(), ids=SESSION_IDS.keys())
def test_a_hostile_session_id_round_trips_through_every_command(
    run: Run, hostile: str, session_id: str
) -> None:
    rows = log_rows(hostile)
    assert output(run("show", "--json", "--", session_id))[0]["content"] == "sum"
    history = output(run("history", "--json", "--", session_id))
    assert [entry["id"] for entry in history][0] == session_id
    assert output(run("events", "--json", "--", session_id))[0]["data"]["session_id"] == session_id
    assert output(run("explain", "--json", "--", session_id, session_id))["active"] is False
    assert len(output(run("audit", "--json", "--", session_id))) == 1
    [hit] = output(run("search", "needle", "--session", session_id, "--json"))
    assert (hit["session_id"], hit["message_id"]) == (session_id, session_id)
    exported = run("export", "--history", "--", session_id)
    assert exported.exit_code == 0
    assert json.loads(exported.stdout.splitlines()[0])["id"] == session_id
    assert run("export", "--format", "md", "--", session_id).exit_code == 0
    ids = [session["id"] for session in output(run("sessions", "--json"))]
    assert ids == list(SESSION_IDS.values())
    assert_intact(hostile, rows)


@pytest.mark.parametrize("session_id", SESSION_IDS.values(), ids=SESSION_IDS.keys())
def test_a_hostile_session_id_never_started_is_one_line_naming_it(
    run: Run, populated: str, session_id: str
) -> None:
    rows = log_rows(populated)
    unknown = f"{session_id}?"
    assert error_line(run("show", "--", unknown)) == (
        f"Error: session {unknown!r} was never started"
    )
    assert_intact(populated, rows)


@pytest.mark.parametrize("query", INVALID_QUERIES.values(), ids=INVALID_QUERIES.keys())
def test_a_query_that_is_not_fts_syntax_is_one_line_and_changes_nothing(
    run: Run, hostile: str, query: str
) -> None:
    rows = log_rows(hostile)
    line = error_line(run("search", "--", query))
    assert line.startswith(("Error: invalid search query ", "Error: the search query is empty"))
    assert_intact(hostile, rows)
    assert len(output(run("search", "needle", "--json", "-n", "100"))) == len(SESSION_IDS)


# -- a store the command cannot write ---------------------------------------------------------


def transcripts(*args: str, **limits: Any) -> subprocess.CompletedProcess[str]:
    """The command line in a real process, under `limits`."""
    environment = {**os.environ, "TRANSCRIPTS_LOCK_TIMEOUT": "1", "COLUMNS": "100"}
    return limited("cli", *args, env=environment, **limits)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    return line


@pytest.fixture
def big_chat(tmp_path: Path) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps({"role": "tool", "content": "x" * 2_000_000}) + "\n")
    path.chmod(0o644)
    return path


@pytest.mark.slow
@pytest.mark.parametrize(("file_mode", "dir_mode"), READ_ONLY.values(), ids=READ_ONLY.keys())
def test_a_read_only_store_is_one_line_and_nothing_stored_changes(
    populated: str, reachable_dir: Path, file_mode: int, dir_mode: int
) -> None:
    store_dir = reachable_dir / "store"
    store_dir.mkdir()
    path = store_dir / "store.db"
    shutil.copy(path_of(populated), path)
    chat = reachable_dir / "trip.jsonl"
    chat.write_text('{"role": "user", "content": "more"}\n')
    url = f"sqlite:///{path}"
    rows = log_rows(url)
    with read_only(path, file_mode, dir_mode):
        done = transcripts("--db", url, "import", "jsonl", str(chat), drop_privileges=True)
    assert one_line(done).startswith(("Error: cannot write ", "Error: cannot open "))
    assert str(path) in done.stderr
    assert_intact(url, rows)


@pytest.mark.slow
def test_a_full_disk_is_one_line_and_everything_stored_before_is_intact(
    populated: str, big_chat: Path
) -> None:
    rows = log_rows(populated)
    size = max(p.stat().st_size for p in path_of(populated).parent.iterdir())
    # Writes past this size fail with EFBIG (Python ignores SIGXFSZ): a disk that fills up.
    done = transcripts("--db", populated, "import", "jsonl", str(big_chat), file_size=size + 65536)
    assert one_line(done).startswith(
        f"Error: {big_chat}: session chat: cannot write session 'chat': disk I/O error"
    )
    assert_intact(populated, rows)
    again = transcripts("--db", populated, "import", "jsonl", str(big_chat))
    assert again.returncode == 0, again.stderr


# -- a corrupted stored event -----------------------------------------------------------------

DAMAGE = {
    "not JSON": b"not json",
    "invalid UTF-8": b'{"message_id": "\xff\xfe"}',
    "empty": b"",
    "an empty object": b"{}",
}


@pytest.fixture(params=list(DAMAGE.values()), ids=list(DAMAGE))
def corrupted(request: pytest.FixtureRequest, populated: str) -> str:
    """The populated store with event 3 of `trip` (message m1) damaged in place."""
    damage_event(populated, "trip", 3, state=lambda _state: request.param)
    return populated


@pytest.mark.parametrize(
    "args", [("events", "trip"), ("show", "trip", "--as-of", "3")], ids=" ".join
)
def test_a_command_that_reads_a_corrupted_event_is_one_line_and_changes_nothing(
    run: Run, corrupted: str, args: tuple[str, ...]
) -> None:
    rows = log_rows(corrupted)
    line = error_line(run(*args))
    assert "a stored event is corrupt" in line and "originator_version 3" in line
    assert log_rows(corrupted) == rows
    assert run("show", "chat").exit_code == 0  # other sessions read as ever


def test_an_import_into_a_session_with_an_old_corrupted_event_appends_without_reading_it(
    run: Run, corrupted: str, tmp_path: Path
) -> None:
    """A write resumes the session from its first event (README, Storage): the damage
    stays where it is, for the commands that read it to report."""
    chat = tmp_path / "trip.jsonl"
    chat.write_text('{"role": "user", "content": "more"}\n')
    rows = log_rows(corrupted)
    assert run("import", "jsonl", str(chat)).exit_code == 0
    assert log_rows(corrupted)[: len(rows)] == rows and len(log_rows(corrupted)) == len(rows) + 1
    assert "a stored event is corrupt" in error_line(run("events", "trip"))
