"""The durability setting: "full" (the default: a write that returned is on disk) or "normal"
(SQLite `synchronous=NORMAL`, PostgreSQL `synchronous_commit=off`: the last writes can be
lost on power loss, never half-applied), from `open(durability=...)`, the environment or the
command line.

What a setting changes is how the database commits, which no query can see; so the SQLite
tests read the setting of the connections the store writes its log with, and the PostgreSQL
test the setting its write transactions run with. That a killed writer at "normal" loses no
acknowledged write is tested in tests/processes/test_crash_safety.py.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from support.cli import run_cli
from transcripts import StorageError, TranscriptStore

FULL, NORMAL = 2, 1  # PRAGMA synchronous


def log_synchronous(store: TranscriptStore) -> int:
    """The `synchronous` setting of a connection the store writes its log with (SQLite)."""
    datastore: Any = store._log.recorder.datastore  # noqa: SLF001 (what no query can see)
    with datastore.get_connection(commit=False) as connection:
        cursor = connection.cursor()
        cursor.execute("PRAGMA synchronous")
        return cursor.fetchone()[0]


def test_a_store_writes_its_log_at_full_durability_by_default(sqlite_url: str) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        assert store.config.settings.durability == "full"
        store.start("s")
        assert log_synchronous(store) == FULL
        assert store.durability_settings() == {
            "durability": "full",
            "journal_mode": "wal",
            "synchronous": "FULL",
        }


def test_a_store_opened_at_normal_durability_writes_its_log_at_synchronous_normal(
    sqlite_url: str,
) -> None:
    with TranscriptStore.open(sqlite_url, durability="normal") as store:
        store.start("s")
        store.append("s", [{"id": "a", "role": "user", "content": "hello"}])
        assert log_synchronous(store) == NORMAL
        # The views' transactions commit at NORMAL and give the connection back as it was.
        assert [message["id"] for message in store.active("s")] == ["a"]
        assert log_synchronous(store) == NORMAL
        assert store.durability_settings()["synchronous"] == "NORMAL"
    with TranscriptStore.open(sqlite_url) as store:  # a setting of the opener, not the file
        assert log_synchronous(store) == FULL
        assert store.durability_settings()["synchronous"] == "FULL"
        assert [message["id"] for message in store.active("s")] == ["a"]


def test_the_environment_sets_the_durability_and_an_argument_beats_it(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRANSCRIPTS_DURABILITY", "normal")
    with TranscriptStore.open(sqlite_url) as store:
        assert store.durability_settings()["durability"] == "normal"
        assert log_synchronous(store) == NORMAL
    with TranscriptStore.open(sqlite_url, durability="full") as store:
        assert store.durability_settings()["durability"] == "full"
        assert log_synchronous(store) == FULL


def test_a_memory_store_reports_that_it_keeps_its_journal_in_memory() -> None:
    with TranscriptStore.open("memory://") as store:
        assert store.durability_settings()["journal_mode"] == "memory"


@pytest.mark.parametrize("durability", ["", "NORMAL", "off", "fast", 1, None])
def test_a_durability_other_than_full_or_normal_is_refused_before_anything_is_opened(
    tmp_path: Any, durability: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    if durability is None:  # from the environment
        monkeypatch.setenv("TRANSCRIPTS_DURABILITY", "sometimes")
    with pytest.raises(StorageError, match="durability is 'full' or 'normal'"):
        TranscriptStore.open(url, durability=durability)
    assert not (tmp_path / "store.db").exists()


def test_every_write_of_a_normal_durability_store_is_there_after_reopening(
    store_url: str,
) -> None:
    with TranscriptStore.open(store_url, durability="normal") as store:
        store.start("s")
        stored = store.append("s", [{"role": "user", "content": f"turn {n}"} for n in range(3)])
        result = store.compact("s", lambda messages: [{"role": "system", "content": "summary"}])
        assert result.committed
        if store_url == "memory://":
            return
    with TranscriptStore.open(store_url) as store:
        assert store.active("s") == result.messages
        assert [entry["id"] for entry in store.history("s")][:3] == [m["id"] for m in stored]
        assert store.verify_projections().ok


def in_a_write_transaction(store: TranscriptStore) -> str:
    """`synchronous_commit` as a write transaction of the store's log runs with it."""
    backend, log = store.config.backend, store._log  # noqa: SLF001
    with backend.writing(log) as tx:
        tx.cursor.execute("SHOW synchronous_commit")
        return str(tx.cursor.fetchone()["synchronous_commit"])


def test_postgres_writes_at_normal_durability_commit_without_waiting_for_the_disk(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url, durability="normal") as store:
        store.start("s")
        assert in_a_write_transaction(store) == "off"
        assert store.durability_settings() == {
            "durability": "normal",
            "synchronous_commit": "off",
            "fsync": "on",
        }
    with TranscriptStore.open(postgres_url) as store:
        assert in_a_write_transaction(store) == "on"
        assert store.durability_settings()["synchronous_commit"] == "on"


def test_postgres_reports_a_database_that_commits_without_waiting_whatever_the_durability(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url) as store:
        store.start("s")
    with psycopg.connect(postgres_url, autocommit=True) as connection:  # a test's own database
        database = connection.info.dbname
        connection.execute(f'ALTER DATABASE "{database}" SET synchronous_commit = off')
    with TranscriptStore.open(postgres_url) as store:
        assert in_a_write_transaction(store) == "off"
        assert store.durability_settings() == {
            "durability": "full",
            "synchronous_commit": "off",
            "fsync": "on",
        }


def test_the_command_line_takes_a_durability(sqlite_url: str) -> None:
    result = run_cli(sqlite_url, "--durability", "normal", "demo")
    assert result.exit_code == 0, result.output
    refused = run_cli(sqlite_url, "--durability", "sometimes", "sessions")
    assert refused.exit_code == 2
    assert "'sometimes' is not one of 'full', 'normal'" in refused.output
