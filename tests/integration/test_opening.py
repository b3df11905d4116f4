"""Opening a store: the URL forms, the default location, and closing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from transcripts import StorageError, TranscriptError, TranscriptStore
from transcripts.config import new_cipher_key


def write_and_read_back(url: str | None) -> list[dict]:
    with TranscriptStore.open(url) as store:
        store.start("s")
        stored = store.append("s", [{"role": "user", "content": "kept"}])
    with TranscriptStore.open(url) as store:
        assert store.active("s") == stored
    return stored


def test_with_no_url_the_store_is_a_file_under_the_user_data_directory_created_with_its_parents(
    private_data_dir: Path,
) -> None:
    assert not private_data_dir.exists()
    write_and_read_back(None)
    assert [path.name for path in private_data_dir.rglob("*.db")]


def test_with_no_url_the_transcripts_url_variable_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_data_dir: Path
) -> None:
    target = tmp_path / "from-env" / "store.db"
    monkeypatch.setenv("TRANSCRIPTS_URL", f"sqlite:///{target}")
    write_and_read_back(None)
    assert target.exists()
    assert not private_data_dir.exists()


def test_a_relative_sqlite_url_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_and_read_back("sqlite:///nested/dir/relative.db")
    assert (tmp_path / "nested" / "dir" / "relative.db").exists()


def test_an_absolute_sqlite_url_names_the_file(tmp_path: Path) -> None:
    write_and_read_back(f"sqlite:///{tmp_path / 'absolute.db'}")
    assert (tmp_path / "absolute.db").exists()


def test_a_memory_store_keeps_nothing_after_it_is_closed() -> None:
    with TranscriptStore.open("memory://") as store:
        store.start("s")
    with TranscriptStore.open("memory://") as store:
        assert store.sessions() == []


@pytest.mark.parametrize("url", ["mysql://host/db", "sqlite://", "sqlite:///"])
def test_an_unsupported_url_raises_a_transcript_error(url: str) -> None:
    with pytest.raises(TranscriptError):
        TranscriptStore.open(url)


def test_a_sqlite_database_of_another_program_is_refused_and_left_untouched(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    connection = sqlite3.connect(other)
    connection.execute("CREATE TABLE notes (body TEXT)")
    connection.execute("INSERT INTO notes VALUES ('keep me')")
    connection.commit()
    connection.close()
    before = other.read_bytes()
    with pytest.raises(StorageError, match="not a transcript store"):
        TranscriptStore.open(f"sqlite:///{other}")
    assert other.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["other.db"]


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    with pytest.raises(StorageError):
        TranscriptStore.open(f"sqlite:///{text}")
    assert text.read_text() == "not a database\n" * 100


MISSING_PACKAGE = """
import sys
sys.modules[sys.argv[1]] = None  # as if the package were not installed
from transcripts import StorageError, TranscriptStore
try:
    TranscriptStore.open(sys.argv[2], cipher_key=sys.argv[3] or None)
except StorageError as error:
    print(error)
"""


@pytest.mark.parametrize(
    ("package", "url", "extra"),
    [
        ("cryptography", "memory://", "encryption"),
        ("psycopg", "postgresql://nobody@127.0.0.1:1/none", "postgres"),
    ],
)
def test_a_missing_optional_package_is_a_storage_error_naming_the_extra(
    package: str, url: str, extra: str
) -> None:
    key = new_cipher_key() if extra == "encryption" else ""
    done = subprocess.run(
        [sys.executable, "-c", MISSING_PACKAGE, package, url, key],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(f"needs {package}: pip install 'transcript-store[{extra}]'")
