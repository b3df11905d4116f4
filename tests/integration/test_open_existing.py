"""`TranscriptStore.open(url, create=False)` opens only a store that is there: a missing one is
`StoreNotFoundError` and nothing is created (no file, no folder, no table, no function). A
bare file path is a SQLite store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.postgres import catalog
from transcripts import NotAStoreError, StorageError, StoreNotFoundError, TranscriptStore


def files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


def test_a_missing_sqlite_file_is_store_not_found_and_neither_it_nor_its_folder_is_made(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'nodir' / 'store.db'}"
    with pytest.raises(StoreNotFoundError, match="does not exist") as raised:
        TranscriptStore.open(url, create=False)
    assert raised.value.url == url
    assert isinstance(raised.value, NotAStoreError) and isinstance(raised.value, StorageError)
    assert files(tmp_path) == []


def test_an_empty_sqlite_file_is_store_not_found_and_stays_empty(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    with pytest.raises(StoreNotFoundError, match="empty database"):
        TranscriptStore.open(f"sqlite:///{path}", create=False)
    assert (files(tmp_path), path.stat().st_size) == (["empty.db"], 0)


def test_an_existing_sqlite_store_opens_with_create_false(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with TranscriptStore.open(url) as store:
        store.start("s")
    with TranscriptStore.open(url, create=False) as store:
        assert [session["id"] for session in store.sessions()] == ["s"]


def test_a_postgres_database_without_the_store_is_store_not_found_and_nothing_is_installed(
    postgres_url: str,
) -> None:
    before = catalog(postgres_url)
    with pytest.raises(StoreNotFoundError, match="has no transcript store's log"):
        TranscriptStore.open(postgres_url, create=False)
    assert catalog(postgres_url) == before
    with TranscriptStore.open(postgres_url) as store:  # create=True installs it
        store.start("s")
    assert catalog(postgres_url) != before
    with TranscriptStore.open(postgres_url, create=False) as store:
        assert [session["id"] for session in store.sessions()] == ["s"]


@pytest.mark.parametrize("form", ["store.db", "./store.db", "absolute", "~/store.db"])
def test_a_bare_file_path_is_a_sqlite_store(
    form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    given = str(tmp_path / "store.db") if form == "absolute" else form
    with TranscriptStore.open(given) as store:
        store.start("s")
        assert store.config.location.path == Path(os.path.expanduser(given))
    assert (tmp_path / "store.db").is_file()
    monkeypatch.setenv("TRANSCRIPTS_URL", given)
    with TranscriptStore.open(None, create=False) as store:
        assert [session["id"] for session in store.sessions()] == ["s"]
