"""User errors: one clear line on stderr, a non-zero exit status, never a traceback."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from support.cli import Run, error_line
from transcripts.adapters.cli import TranscriptsGroup


@pytest.mark.parametrize(
    "args",
    [
        ("show", "nope"),
        ("show", "nope", "--as-of", "2"),
        ("history", "nope"),
        ("audit", "nope"),
        ("events", "nope"),
        ("explain", "nope", "m1"),
        ("export", "nope"),
        ("export", "nope", "--format", "md", "--history"),
    ],
    ids=" ".join,
)
def test_an_unknown_session_is_one_line_naming_it(
    run: Run, populated: str, args: tuple[str, ...]
) -> None:
    assert error_line(run(*args)) == "Error: session 'nope' was never started"


def test_an_unknown_message_id_is_one_line_naming_it(run: Run, populated: str) -> None:
    assert error_line(run("explain", "trip", "zzz")) == (
        "Error: session 'trip' has no message 'zzz'"
    )


def test_a_bad_url_is_one_line_saying_which_urls_work(run: Run) -> None:
    assert error_line(run("sessions", url="ftp://somewhere")).startswith(
        "Error: unsupported store URL 'ftp://somewhere': use memory://, sqlite:///relative.db"
    )
    assert error_line(run("sessions", url="sqlite:///")) == (
        "Error: no database file in URL 'sqlite:///'"
    )


def test_a_db_that_is_not_sqlite_is_not_a_store(run: Run, tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    assert error_line(run("sessions", url=f"sqlite:///{text}")) == (
        f"Error: {text} is not a transcript store: file is not a database"
    )


def test_a_sqlite_database_of_another_program_is_refused_and_left_untouched(
    run: Run, tmp_path: Path
) -> None:
    other = tmp_path / "state.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
        connection.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, content TEXT)")
    connection.close()
    before = other.read_bytes()
    assert error_line(run("sessions", url=f"sqlite:///{other}")) == (
        f"Error: {other} is not a transcript store: it is a SQLite database of another program "
        "(tables messages, sessions, …)"
    )
    assert other.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["state.db"]


def test_a_db_path_that_is_a_directory_is_one_line(run: Run, tmp_path: Path) -> None:
    line = error_line(run("sessions", url=f"sqlite:///{tmp_path}"))
    assert line == f"Error: {tmp_path} is not a transcript store: it is a directory"
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"role": "user", "content": "hi"}\n')
    line = error_line(run("import", "jsonl", str(chat), url=f"sqlite:///{tmp_path}"))
    assert line.startswith("Error: cannot create ")


def test_an_unreadable_import_file_is_one_line(run: Run, tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    assert error_line(run("import", "jsonl", str(missing))) == (
        f"Error: cannot read {missing}: No such file or directory"
    )
    assert error_line(run("import", "jsonl", str(tmp_path))) == (
        f"Error: cannot read {tmp_path}: Is a directory"
    )


def test_a_version_below_one_is_a_usage_error(run: Run, populated: str) -> None:
    result = run("show", "trip", "--as-of", "0")
    assert result.exit_code == 2
    assert "Invalid value for '--as-of'" in result.stderr


def test_file_errors_raised_inside_any_command_become_one_line() -> None:
    @click.group(cls=TranscriptsGroup)
    def group() -> None:
        pass

    @group.command()
    def read() -> None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", "chats/a.jsonl")

    result = CliRunner().invoke(group, ["read"])
    assert result.exit_code == 1
    assert result.stderr == "Error: chats/a.jsonl: No such file or directory\n"
