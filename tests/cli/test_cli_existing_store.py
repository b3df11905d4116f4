"""Commands that read or change an existing session never create a store: on a missing one
they print one line naming the URL and how to make a store, exit 1, and write nothing (the
file tree, the PostgreSQL catalog unchanged). Only `demo`, `import …` and `migrate --to`
create one. `--db` and $TRANSCRIPTS_URL take a bare file path as a SQLite store. Run as real
processes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support.cli import run_process
from support.postgres import catalog
from transcripts import TranscriptStore

pytestmark = pytest.mark.slow

NOT_CREATING = {
    "sessions": ["sessions"],
    "show": ["show", "s"],
    "history": ["history", "s"],
    "events": ["events", "s"],
    "audit": ["audit"],
    "audit of a session": ["audit", "s"],
    "explain": ["explain", "s", "m"],
    "message": ["message", "s", "m"],
    "search": ["search", "hello"],
    "export": ["export", "s"],
    "info": ["info"],
    "timeline": ["timeline", "s"],
    "projections status": ["projections", "status"],
    "projections verify": ["projections", "verify"],
    "projections rebuild": ["projections", "rebuild"],
    "projections catch-up": ["projections", "catch-up"],
    "rewind": ["rewind", "s"],
    "forget": ["forget", "s", "--yes"],
    "serve": ["serve", "--port", "0"],
}


def transcripts(
    *args: str, cwd: Path, url: str | None = None, home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_process(*args, cwd=cwd, url=url, home=home)


def files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


def assert_no_store(result: subprocess.CompletedProcess[str], url: str) -> None:
    assert (result.returncode, result.stdout) == (1, ""), result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"Error: no store at {url}: ")
    assert "nothing was created" in line and "transcripts import" in line, line


def test_every_command_that_does_not_create_says_there_is_no_store_and_writes_nothing(
    tmp_path: Path,
) -> None:
    url = "sqlite:///nodir/store.db"
    for command, args in NOT_CREATING.items():
        result = transcripts("--db", url, *args, cwd=tmp_path)
        assert_no_store(result, url)
        assert files(tmp_path) == [], command


def test_without_a_url_the_default_store_is_not_created_by_a_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = transcripts("sessions", cwd=tmp_path, home=home)
    assert result.returncode == 1 and "no store at sqlite:///" in result.stderr
    assert files(tmp_path) == []


def test_on_postgres_the_commands_install_nothing(postgres_url: str, tmp_path: Path) -> None:
    before = catalog(postgres_url)
    for command in ("sessions", "show", "rewind", "forget", "projections rebuild"):
        result = transcripts(*NOT_CREATING[command], cwd=tmp_path, url=postgres_url)
        assert_no_store(result, postgres_url)
    assert catalog(postgres_url) == before


@pytest.mark.parametrize("form", ["store.db", "./store.db", "absolute", "~/store.db"])
def test_db_and_the_url_variable_take_a_bare_file_path(form: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    place = home if form.startswith("~") else tmp_path
    given = str(tmp_path / "store.db") if form == "absolute" else form
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"id": "q", "role": "user", "content": "hello"}\n')
    imported = transcripts("--db", given, "import", "jsonl", str(chat), cwd=tmp_path, home=home)
    assert imported.returncode == 0, imported.stderr
    assert (place / "store.db").is_file()
    shown = transcripts("show", "chat", "--json", cwd=tmp_path, url=given, home=home)
    assert shown.returncode == 0, shown.stderr
    assert '"hello"' in shown.stdout


@pytest.mark.parametrize(
    "args",
    [["demo"], ["import", "jsonl", "chat.jsonl"]],
    ids=["demo", "import jsonl"],
)
def test_demo_and_import_create_the_store_with_its_folder(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "chat.jsonl").write_text('{"role": "user", "content": "hello"}\n')
    result = transcripts("--db", "sqlite:///new/store.db", *args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with TranscriptStore.open(f"sqlite:///{tmp_path / 'new' / 'store.db'}", create=False) as s:
        assert len(s.sessions()) == 1
