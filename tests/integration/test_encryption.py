"""Encryption at rest: with a cipher key, no message content is stored in the clear, and a
store opens only with the key it was made with."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from support.reads import everything
from support.rows import path_of
from transcripts import SetState, TranscriptStore
from transcripts.adapters.migration import migrate
from transcripts.config import new_cipher_key
from transcripts.domain.errors import EncryptionKeyError, TranscriptError

SECRET = "zebra-7f3a"  # in every kind of content the store keeps


@pytest.fixture
def key() -> str:
    return new_cipher_key()


def fill(store: TranscriptStore) -> None:
    """A session with the secret in its metadata, messages, tool call, summary, audit, the
    reason of a rewind (of a message holding it, then restored), its state and a
    compaction's metadata."""
    store.start("s", metadata={"title": f"about {SECRET}"})
    store.append(
        "s",
        [
            {"id": "m1", "role": "user", "content": f"my secret is {SECRET}"},
            {
                "id": "m2",
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": f'{{"q": "{SECRET}"}}'},
                    }
                ],
            },
            {"id": "m3", "role": "tool", "tool_call_id": "c1", "content": f"found {SECRET}"},
            {"id": "m4", "role": "user", "content": "thanks"},
        ],
    )
    attempt = store.begin_compaction("s")
    store.fail_compaction(attempt, f"summarizer choked on {SECRET}", reason=f"budget {SECRET}")
    store.compact(
        "s", lambda ms: [{"role": "user", "content": f"summary: {SECRET}"}, ms[-1]], reason="ok"
    )
    store.append(
        "s",
        [
            {"id": "m5", "role": "user", "content": f"oops, {SECRET}"},
            {"id": "m6", "role": "user", "content": "x"},
        ],
    )
    store.rewind("s", count=2, reason=f"undo {SECRET}")
    store.append("s", [{"id": "m5", "role": "user", "content": f"oops, {SECRET}"}])  # restored
    store.write("s", [SetState({"title": f"chat about {SECRET}"})])
    attempt = store.begin_compaction("s")
    store.commit_compaction(attempt, attempt.messages, metadata={"handler": SECRET})


def test_an_encrypted_store_reads_back_exactly_what_a_plain_one_does(
    store_url: str, key: str
) -> None:
    with TranscriptStore.open("memory://") as plain:
        fill(plain)
        expected = everything(plain)
    with TranscriptStore.open(store_url, cipher_key=key) as encrypted:
        fill(encrypted)
        assert _without_volatile(everything(encrypted)) == _without_volatile(expected)
        assert encrypted.verify_projections().ok
        encrypted.rebuild_projections()
        assert encrypted.active("s")[0]["content"] == f"summary: {SECRET}"
        assert encrypted.verify_projections().ok


def test_the_store_file_holds_no_plaintext_of_any_message(sqlite_url: str, key: str) -> None:
    with TranscriptStore.open(sqlite_url, cipher_key=key) as store:
        fill(store)
        store.rebuild_projections()
        store.append("s", [{"role": "assistant", "content": f"after the rebuild, {SECRET}"}])
        assert store.active("s")[-1]["content"].endswith(SECRET)
    path = path_of(sqlite_url)
    files = [p for p in path.parent.iterdir() if p.name.startswith(path.name)]
    assert path in files
    for file in files:
        assert SECRET.encode() not in file.read_bytes(), file.name


def test_postgresql_tables_hold_no_plaintext_of_any_message(postgres_url: str, key: str) -> None:
    import psycopg

    with TranscriptStore.open(postgres_url, cipher_key=key) as store:
        fill(store)
        location = store.config.location
    assert location is not None
    with psycopg.connect(**location.connection_kwargs()) as connection:
        tables = [
            name
            for (name,) in connection.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            )
        ]
        assert "transcripts_events" in tables and "message_history" in tables
        for table in tables:
            rows = connection.execute(f'SELECT t::text FROM "{table}" AS t').fetchall()
            assert not [row for (row,) in rows if SECRET in row], table


def test_an_encrypted_store_does_not_open_without_its_key(sqlite_url: str, key: str) -> None:
    with TranscriptStore.open(sqlite_url, cipher_key=key) as store:
        fill(store)
        before = everything(store)
    with pytest.raises(
        EncryptionKeyError, match="this store is encrypted: set TRANSCRIPTS_CIPHER_KEY"
    ):
        TranscriptStore.open(sqlite_url)
    with pytest.raises(EncryptionKeyError, match="is not the key of this store"):
        TranscriptStore.open(sqlite_url, cipher_key=new_cipher_key())
    with TranscriptStore.open(sqlite_url, cipher_key=key) as store:
        assert everything(store) == before
        assert store.verify_projections().ok


def test_the_key_comes_from_the_environment_when_not_given(
    sqlite_url: str, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRANSCRIPTS_CIPHER_KEY", key)
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
    monkeypatch.delenv("TRANSCRIPTS_CIPHER_KEY")
    with pytest.raises(EncryptionKeyError):
        TranscriptStore.open(sqlite_url)


def test_a_plain_store_refuses_a_key_rather_than_mixing_plain_and_encrypted_events(
    sqlite_url: str, key: str
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
    with pytest.raises(EncryptionKeyError, match="this store is not encrypted"):
        TranscriptStore.open(sqlite_url, cipher_key=key)
    with TranscriptStore.open(sqlite_url) as store:
        assert store.active("s")[0]["content"] == f"summary: {SECRET}"


@pytest.mark.parametrize(
    "bad_key", ["not base64!", "c2hvcnQ=", new_cipher_key()[:-4]], ids=["text", "short", "cut"]
)
def test_a_malformed_key_is_refused_before_anything_is_opened(tmp_path: Path, bad_key: str) -> None:
    with pytest.raises(EncryptionKeyError, match="transcripts generate-key"):
        TranscriptStore.open(f"sqlite:///{tmp_path / 'new.db'}", cipher_key=bad_key)
    assert not (tmp_path / "new.db").exists()


def test_search_is_refused_on_an_encrypted_store(store_url: str, key: str) -> None:
    with TranscriptStore.open(store_url, cipher_key=key) as store:
        fill(store)
        with pytest.raises(TranscriptError, match="not available on an encrypted store"):
            store.search(SECRET)


def _without_volatile(seen: dict[str, Any]) -> str:
    """What a reader sees, without what differs between two runs of `fill`: made-up ids and
    times."""
    text = json.dumps(seen, default=str, sort_keys=True)
    text = re.sub(r"\b(cmp|msg)_[0-9a-f]{32}\b", r"\1_id", text)
    return re.sub(r"\d{4}-\d\d-\d\d[ T][\d:.]+(\+00:00)?", "time", text)


def test_migrate_encrypts_a_plain_store_and_rotates_a_key(tmp_path: Path, key: str) -> None:
    plain, encrypted, rotated = (
        f"sqlite:///{tmp_path / name}" for name in ("p.db", "e.db", "r.db")
    )
    with TranscriptStore.open(plain) as store:
        fill(store)
        expected = everything(store)
    assert migrate(plain, encrypted, source_key="", target_key=key).ok
    new_key = new_cipher_key()
    assert migrate(encrypted, rotated, source_key=key, target_key=new_key).ok
    with TranscriptStore.open(rotated, cipher_key=new_key) as store:
        assert everything(store) == expected
    assert SECRET.encode() not in (tmp_path / "r.db").read_bytes()


def test_migrate_refuses_a_source_it_cannot_decrypt_and_copies_nothing(
    tmp_path: Path, key: str
) -> None:
    source, target = f"sqlite:///{tmp_path / 's.db'}", f"sqlite:///{tmp_path / 't.db'}"
    with TranscriptStore.open(source, cipher_key=key) as store:
        fill(store)
    with pytest.raises(EncryptionKeyError, match="--from-key-env"):
        migrate(source, target, source_key=new_cipher_key(), target_key="")
    with TranscriptStore.open(target) as store:
        assert store.sessions() == []
