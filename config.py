"""Store URLs and settings, turned into the event-sourcing library's configuration.

URLs:
- `memory://` — in-process, gone when the store closes.
- `sqlite:///relative/path.db`, `sqlite:////absolute/path.db` — a SQLite file (WAL mode),
  created with its parent directories, private to the user (0600 / 0700).
- `postgresql://user:password@host:port/dbname` (or `postgres://`) — a PostgreSQL database
  that exists already (the store creates its tables in it). Every part but the database name
  may be left out: user = the login name, no password, host = localhost, port = 5432.
  Percent-encode special characters of the user and password. Needs the `postgres` extra.

With no URL: `$TRANSCRIPTS_URL`, else `default_path()` under the user's data directory.
Settings come from keyword arguments, else environment variables:
- `TRANSCRIPTS_LOCK_TIMEOUT` (seconds, default 30): how long a write waits for the
  database lock before it fails with StorageError.
- `TRANSCRIPTS_CIPHER_KEY`: encrypt the store at rest (AES-GCM) with this key, made by
  `transcripts generate-key`; needs the `encryption` extra. A store is encrypted, or not,
  from its creation (see `adapters/sealing.py`).
"""

from __future__ import annotations

import binascii
import getpass
import math
import os
import secrets
from base64 import b64decode, b64encode
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote, unquote, urlsplit
from uuid import UUID, uuid4

from eventsourcing.utils import TopicError, resolve_topic
from platformdirs import user_data_path

from .domain.errors import EncryptionKeyError, StorageError

if TYPE_CHECKING:
    from eventsourcing.application import Application
    from eventsourcing.persistence import StoredEvent

    from .projections.projector import Projector
    from .projections.views import TranscriptViews

URL_VARIABLE = "TRANSCRIPTS_URL"
LOCK_TIMEOUT_VARIABLE = "TRANSCRIPTS_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 30.0
CIPHER_KEY_VARIABLE = "TRANSCRIPTS_CIPHER_KEY"
CIPHER_TOPIC = "transcripts.adapters.storage.cipher:AESCipher"
CIPHER_KEY_SIZES = (16, 24, 32)  # bytes: AES-128, AES-192, AES-256
TRANSCODER_TOPIC = "transcripts.adapters.storage.codec:OrjsonTranscoder"
SQLITE_PERSISTENCE_MODULE = "transcripts.adapters.storage.sqlite.factory:Factory"
SQLITE_BACKEND_TOPIC = "transcripts.adapters.storage.sqlite.backend:SQLITE"
POSTGRES_PERSISTENCE_MODULE = "eventsourcing.postgres"
POSTGRES_BACKEND_TOPIC = "transcripts.adapters.storage.postgres.backend:POSTGRES"
POSTGRES_RECORDER_TOPIC = "transcripts.adapters.storage.postgres.backend:TranscriptRecorder"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
POSTGRES_POOL_SIZE = 2  # connections a store keeps open
POSTGRES_MAX_OVERFLOW = 6  # more, opened under load (a follower holds one to LISTEN)
POSTGRES_MIN_CONNECT_TIMEOUT = 5  # seconds to get a connection from the pool
AGGREGATE_CACHE_SIZE = 128


def default_path() -> Path:
    """Where the store lives when no URL is given."""
    return user_data_path("transcripts", appauthor=False) / "transcripts.db"


def default_url() -> str:
    return os.environ.get(URL_VARIABLE) or f"sqlite:///{default_path()}"


class StorageBackend(Protocol):
    """What a backend adds to the library's persistence module: its files and its views."""

    def prepare(self, config: StoreConfig) -> None:
        """Create what the store needs before the library connects (files, directories)."""

    def open_views(self, log: Application[UUID], projector: type[Projector]) -> TranscriptViews:
        """The views of the store, created if new, kept up to date by the log's writers."""

    def replace_stream(self, log: Application[UUID], tombstone: StoredEvent) -> None:
        """Insert `tombstone` and delete every earlier event of its stream, in one transaction
        (fenced like every insert: a version conflict raises the library's IntegrityError)."""

    def scrub(self, log: Application[UUID]) -> None:
        """After an erasure (its views caught up): leave none of the deleted bytes where the
        backend can reach them (indexes, free space, the write-ahead log)."""


@dataclass(frozen=True)
class PostgresLocation:
    """Where a PostgreSQL store is: the parts of its URL."""

    dbname: str
    host: str = "localhost"
    port: int = 5432
    user: str = field(default_factory=getpass.getuser)
    password: str = field(default="", repr=False)

    @property
    def url(self) -> str:
        """The URL without the password: safe to print."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"postgresql://{quote(self.user, safe='')}@{host}:{self.port}/{quote(self.dbname)}"

    def connection_kwargs(self) -> dict[str, str | int]:
        return {
            "dbname": self.dbname,
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
        }


@dataclass(frozen=True)
class StoreConfig:
    url: str  # as given, but without a password
    lock_timeout: float
    sqlite_path: Path | None  # None for memory:// and PostgreSQL
    backend_topic: str = SQLITE_BACKEND_TOPIC  # a StorageBackend
    postgres: PostgresLocation | None = None
    cipher_key: str | None = field(default=None, repr=False)

    def backend(self) -> StorageBackend:
        return _resolve(self.backend_topic, f"{self.url} needs", "postgres")

    @classmethod
    def from_url(
        cls,
        url: str | None = None,
        *,
        lock_timeout: float | None = None,
        cipher_key: str | None = None,
    ) -> StoreConfig:
        url = url or default_url()
        timeout = _lock_timeout(lock_timeout)
        key = _cipher_key(cipher_key)
        if url == "memory://":
            return cls(url, timeout, None, cipher_key=key)
        if url.startswith("sqlite:///"):
            path = url.removeprefix("sqlite:///")
            if not path or path.endswith("/"):
                raise StorageError(f"no database file in URL {url!r}")
            return cls(url, timeout, Path(path), cipher_key=key)
        if url.startswith(POSTGRES_SCHEMES):
            location = _postgres_location(url)
            return cls(location.url, timeout, None, POSTGRES_BACKEND_TOPIC, location, key)
        raise StorageError(
            f"unsupported store URL {_without_password(url)!r}: use memory://, "
            "sqlite:///relative.db, sqlite:////absolute/path.db "
            "or postgresql://user:password@host:port/dbname"
        )

    def library_env(self) -> dict[str, str]:
        """The eventsourcing environment for this store (memory:// is an in-memory SQLite)."""
        cache = {
            "TRANSCODER_TOPIC": TRANSCODER_TOPIC,
            "AGGREGATE_CACHE_MAXSIZE": str(AGGREGATE_CACHE_SIZE),
            "AGGREGATE_CACHE_FASTFORWARD": "n",
            "DEEPCOPY_FROM_AGGREGATE_CACHE": "n",
            **self._cipher_env(),
        }
        if self.postgres is not None:
            return {**self._postgres_env(self.postgres), **cache}
        database = (
            f"file:transcripts-{uuid4().hex}?mode=memory&cache=shared"
            if self.sqlite_path is None
            else str(self.sqlite_path)
        )
        return {
            "PERSISTENCE_MODULE": SQLITE_PERSISTENCE_MODULE,
            "SQLITE_DBNAME": database,
            "SQLITE_LOCK_TIMEOUT": str(max(1, round(self.lock_timeout))),
            **cache,
        }

    def _cipher_env(self) -> dict[str, str]:
        if self.cipher_key is None:
            return {}
        _resolve(CIPHER_TOPIC, "encryption needs", "encryption")
        return {"CIPHER_TOPIC": CIPHER_TOPIC, "CIPHER_KEY": self.cipher_key}

    def _postgres_env(self, location: PostgresLocation) -> dict[str, str]:
        """The library's PostgreSQL module. Its tables are named after the application
        (`transcripts_events`, `transcripts_tracking`), which never changes. The backend
        creates them (`CREATE_TABLE=n` here), one process at a time."""
        seconds = max(1, math.ceil(self.lock_timeout))  # the library's 0 would wait forever
        return {
            "PERSISTENCE_MODULE": POSTGRES_PERSISTENCE_MODULE,
            "APPLICATION_RECORDER_TOPIC": POSTGRES_RECORDER_TOPIC,
            "POSTGRES_DBNAME": location.dbname,
            "POSTGRES_HOST": location.host,
            "POSTGRES_PORT": str(location.port),
            "POSTGRES_USER": location.user,
            "POSTGRES_PASSWORD": location.password,
            "POSTGRES_LOCK_TIMEOUT": str(seconds),
            "POSTGRES_CONNECT_TIMEOUT": str(max(POSTGRES_MIN_CONNECT_TIMEOUT, seconds)),
            "POSTGRES_POOL_SIZE": str(POSTGRES_POOL_SIZE),
            "POSTGRES_MAX_OVERFLOW": str(POSTGRES_MAX_OVERFLOW),
            "CREATE_TABLE": "n",
        }


def _postgres_location(url: str) -> PostgresLocation:
    shown = _without_password(url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise StorageError(f"invalid PostgreSQL URL {shown!r}: {error}") from None
    if parts.query or parts.fragment:
        raise StorageError(
            f"invalid PostgreSQL URL {shown!r}: parameters (?…) are not supported; "
            "use postgresql://user:password@host:port/dbname"
        )
    dbname = unquote(parts.path.removeprefix("/"))
    if not dbname or "/" in dbname:
        raise StorageError(
            f"no database name in URL {shown!r}: use postgresql://user:password@host:port/dbname"
        )
    location = PostgresLocation(dbname)
    return PostgresLocation(
        dbname=dbname,
        host=parts.hostname or location.host,
        port=port or location.port,
        user=unquote(parts.username) if parts.username else location.user,
        password=unquote(parts.password) if parts.password else "",
    )


def _without_password(url: str) -> str:
    """The URL with its password, if any, replaced by ***."""
    scheme, separator, rest = url.partition("://")
    credentials, at, place = rest.rpartition("@")
    if not separator or not at or ":" not in credentials:
        return url
    return f"{scheme}://{credentials.split(':', 1)[0]}:***@{place}"


def _resolve(topic: str, needs: str, extra: str) -> Any:
    """The object a topic names; a StorageError naming the missing package and the extra
    that installs it when an optional dependency is not installed."""
    try:
        return resolve_topic(topic)
    except TopicError as error:
        missing = error.__cause__
        if not isinstance(missing, ImportError):
            raise
        package = (missing.name or "a package").split(".")[0]
        raise StorageError(f"{needs} {package}: pip install 'transcript-store[{extra}]'") from None


def new_cipher_key() -> str:
    """A random AES-256 key, as `TRANSCRIPTS_CIPHER_KEY` takes it."""
    return b64encode(secrets.token_bytes(max(CIPHER_KEY_SIZES))).decode()


def _cipher_key(given: str | None) -> str | None:
    """The key given, else the environment's; checked to be a key `generate-key` makes."""
    key = given if given is not None else os.environ.get(CIPHER_KEY_VARIABLE)
    if not key:
        return None
    try:
        size = len(b64decode(key, validate=True))
    except (binascii.Error, ValueError):
        size = 0
    if size not in CIPHER_KEY_SIZES:
        raise EncryptionKeyError(
            f"{CIPHER_KEY_VARIABLE} is not a valid key (base64 of 16, 24 or 32 bytes): "
            "make one with `transcripts generate-key`"
        )
    return key


def _lock_timeout(given: float | None) -> float:
    if given is not None:
        value: object = given
    else:
        value = os.environ.get(LOCK_TIMEOUT_VARIABLE) or DEFAULT_LOCK_TIMEOUT
    try:
        timeout = float(value)  # type: ignore[arg-type]
    except ValueError:
        raise StorageError(
            f"{LOCK_TIMEOUT_VARIABLE} must be a number of seconds: {value!r}"
        ) from None
    if timeout <= 0:
        raise StorageError(f"the lock timeout must be positive: {timeout}")
    return timeout
