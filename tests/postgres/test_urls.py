"""PostgreSQL store URLs: what they mean, and a password never shown. No server needed."""

from __future__ import annotations

import getpass

import pytest

from support.postgres import free_port
from transcripts import StorageError, TranscriptStore
from transcripts.adapters.storage.postgres.location import PostgresLocation
from transcripts.application.storage import StoreConfig


def test_a_full_postgresql_url_gives_every_connection_setting() -> None:
    config = StoreConfig.from_url("postgresql://agent:s3cret@db.example:6543/transcripts")
    assert config.location == PostgresLocation(
        dbname="transcripts", host="db.example", port=6543, user="agent", password="s3cret"
    )
    env = config.library_env()
    assert env["PERSISTENCE_MODULE"] == "eventsourcing.postgres"
    assert (env["POSTGRES_DBNAME"], env["POSTGRES_HOST"], env["POSTGRES_PORT"]) == (
        "transcripts",
        "db.example",
        "6543",
    )
    assert (env["POSTGRES_USER"], env["POSTGRES_PASSWORD"]) == ("agent", "s3cret")


def test_parts_left_out_of_a_url_default_to_localhost_5432_the_login_name_and_no_password() -> None:
    location = StoreConfig.from_url("postgresql:///agents").location
    assert location == PostgresLocation("agents", "localhost", 5432, getpass.getuser(), "")


def test_the_postgres_scheme_is_the_same_as_postgresql() -> None:
    assert (
        StoreConfig.from_url("postgres://u@h/d").location
        == StoreConfig.from_url("postgresql://u@h/d").location
    )


def test_percent_encoded_characters_of_the_user_password_and_database_are_decoded() -> None:
    location = StoreConfig.from_url("postgresql://a%40b:p%3Aw%2Fd%40@host/my%20db").location
    assert location is not None
    assert (location.user, location.password, location.dbname) == ("a@b", "p:w/d@", "my db")


def test_the_table_prefix_and_the_lock_timeout_come_from_the_store_not_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("POSTGRES_LOCK_TIMEOUT", "0")  # would mean: wait forever
    env = StoreConfig.from_url("postgresql://u@h/d", lock_timeout=2.5).library_env()
    assert env["POSTGRES_LOCK_TIMEOUT"] == "3"
    # Tables are named after the application: transcripts_events.
    assert "POSTGRES_SCHEMA" not in env and env["CREATE_TABLE"] == "n"


def test_the_store_url_kept_and_printed_has_no_password() -> None:
    config = StoreConfig.from_url("postgresql://agent:s3cret@db.example:6543/transcripts")
    assert config.url == "postgresql://agent@db.example:6543/transcripts"
    assert "s3cret" not in repr(config)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://user:pw@host:5432/",
        "postgresql://user:pw@host:5432",
        "postgresql://user:pw@host:99999/db",
        "postgresql://user:pw@host/db?sslmode=require",
        "postgresql://user:pw@host/a/b",
    ],
)
def test_a_malformed_postgresql_url_is_a_storage_error_that_does_not_show_the_password(
    url: str,
) -> None:
    with pytest.raises(StorageError) as raised:
        StoreConfig.from_url(url)
    assert "pw" not in str(raised.value).replace("postgresql", "")


def test_an_unreachable_server_fails_at_once_with_one_storage_error_naming_it() -> None:
    port = free_port()
    with pytest.raises(StorageError, match=f"cannot connect to PostgreSQL at .*:{port}/nowhere"):
        TranscriptStore.open(f"postgresql://someone:topsecret@127.0.0.1:{port}/nowhere")


def test_the_error_of_an_unreachable_server_does_not_show_the_password() -> None:
    with pytest.raises(StorageError) as raised:
        TranscriptStore.open(f"postgresql://someone:topsecret@127.0.0.1:{free_port()}/nowhere")
    assert "topsecret" not in str(raised.value)
    assert raised.value.__cause__ is None  # one error, not a chain of driver errors
