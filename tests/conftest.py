"""Shared fixtures. `store` runs a test once per backend: memory, a real SQLite file and,
when $TRANSCRIPTS_TEST_POSTGRES_URL names a PostgreSQL server, a fresh PostgreSQL database
(support/backends.py); `durable_url` once per backend other connections can reach."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from support.backends import (
    BACKENDS,
    DURABLE_BACKENDS,
    POSTGRES_SERVER,
    POSTGRES_VARIABLE,
    fresh_url,
)
from support.limits import reachable_directory
from support.messages import turns
from transcripts import TranscriptStore
from transcripts.application.storage import StoreConfig


@pytest.fixture(autouse=True)
def private_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the default store location at a temporary directory, never the user's."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.delenv("TRANSCRIPTS_URL", raising=False)
    monkeypatch.delenv("TRANSCRIPTS_LOCK_TIMEOUT", raising=False)
    monkeypatch.delenv("TRANSCRIPTS_CIPHER_KEY", raising=False)
    return home


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def store_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A URL of a fresh, empty store on the test's backend."""
    return fresh_url(backend, tmp_path, request)


@pytest.fixture(params=DURABLE_BACKENDS)
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL of a fresh, empty store in a database other connections can reach (a SQLite
    file, a PostgreSQL database): the test runs once on each such backend."""
    return fresh_url(request.param, tmp_path, request)


class PostgresServer:
    """The server $TRANSCRIPTS_TEST_POSTGRES_URL names: makes databases, drops them at the end.

    Any failure (server down, bad credentials, psycopg missing) raises: a test that asked
    for PostgreSQL fails loudly, it never skips.
    """

    def __init__(self, url: str) -> None:
        location = StoreConfig.from_url(url).location
        if location is None:
            raise ValueError(f"{POSTGRES_VARIABLE} is not a postgresql:// URL: {url!r}")
        self.location = location
        self.created: list[str] = []

    def _admin(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(**self.location.connection_kwargs(), autocommit=True) as connection:
            connection.execute(statement)  # type: ignore[arg-type]

    def database(self) -> str:
        """The URL of a new, empty database, named after the server URL's database (CI drops
        every database whose name starts with its run's database name)."""
        name = f"{self.location.dbname[:40]}__{uuid.uuid4().hex[:16]}"
        self._admin(f'CREATE DATABASE "{name}"')
        self.created.append(name)
        location = self.location
        password = f":{quote(location.password, safe='')}" if location.password else ""
        user = quote(location.user, safe="")
        return f"postgresql://{user}{password}@{location.host}:{location.port}/{name}"

    def drop_all(self) -> None:
        while self.created:
            self._admin(f'DROP DATABASE IF EXISTS "{self.created.pop()}" WITH (FORCE)')


@pytest.fixture
def postgres_server() -> Iterator[PostgresServer]:
    """The test PostgreSQL server; databases made with `.database()` are dropped after the test."""
    if not POSTGRES_SERVER:
        pytest.skip(f"PostgreSQL tests need {POSTGRES_VARIABLE} (see the README)")
    server = PostgresServer(POSTGRES_SERVER)
    yield server
    server.drop_all()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A URL of a fresh, empty PostgreSQL database, dropped after the test."""
    return postgres_server.database()


@pytest.fixture
def store(store_url: str) -> Iterator[TranscriptStore]:
    with TranscriptStore.open(store_url) as opened:
        yield opened


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A URL of a fresh SQLite file, for tests that need a file (reopening, processes)."""
    return f"sqlite:///{tmp_path / 'store.db'}"


Messages = Callable[..., list[dict]]


@pytest.fixture(name="turns")
def turns_fixture() -> Messages:
    """Make `n` alternating user/assistant messages without ids: turns(4, prefix="q")."""
    return turns


@pytest.fixture
def reachable_dir() -> Iterator[Path]:
    """A directory the `nobody` user can reach, removed afterwards (the read-only tests)."""
    with reachable_directory() as directory:
        yield directory
