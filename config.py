"""Store URLs and settings, turned into the event-sourcing library's configuration.

URLs:
- `memory://` — in-process, gone when the store closes.
- `sqlite:///relative/path.db`, `sqlite:////absolute/path.db` — a SQLite file (WAL mode),
  created with its parent directories, private to the user (0600 / 0700).

With no URL: `$TRANSCRIPTS_URL`, else `default_path()` under the user's data directory.
Settings come from keyword arguments, else environment variables:
- `TRANSCRIPTS_LOCK_TIMEOUT` (seconds, default 30): how long a write waits for the
  database lock before it fails with StorageError.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from uuid import UUID, uuid4

from eventsourcing.utils import resolve_topic
from platformdirs import user_data_path

from .domain.errors import StorageError

if TYPE_CHECKING:
    from eventsourcing.application import Application

    from .projections.projector import Projector
    from .projections.views import TranscriptViews

URL_VARIABLE = "TRANSCRIPTS_URL"
LOCK_TIMEOUT_VARIABLE = "TRANSCRIPTS_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 30.0
TRANSCODER_TOPIC = "transcripts.adapters.codec:OrjsonTranscoder"
SQLITE_PERSISTENCE_MODULE = "transcripts.adapters.sqlite_factory:Factory"
SQLITE_BACKEND_TOPIC = "transcripts.adapters.sqlite_backend:SQLITE"
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


@dataclass(frozen=True)
class StoreConfig:
    url: str
    lock_timeout: float
    sqlite_path: Path | None  # None for memory://
    backend_topic: str = SQLITE_BACKEND_TOPIC  # a StorageBackend

    def backend(self) -> StorageBackend:
        return resolve_topic(self.backend_topic)

    @classmethod
    def from_url(cls, url: str | None = None, *, lock_timeout: float | None = None) -> StoreConfig:
        url = url or default_url()
        timeout = _lock_timeout(lock_timeout)
        if url == "memory://":
            return cls(url, timeout, None)
        if url.startswith("sqlite:///"):
            path = url.removeprefix("sqlite:///")
            if not path or path.endswith("/"):
                raise StorageError(f"no database file in URL {url!r}")
            return cls(url, timeout, Path(path))
        raise StorageError(
            f"unsupported store URL {url!r}: use memory://, sqlite:///relative.db "
            "or sqlite:////absolute/path.db"
        )

    def library_env(self) -> dict[str, str]:
        """The eventsourcing environment for this store (memory:// is an in-memory SQLite)."""
        database = (
            f"file:transcripts-{uuid4().hex}?mode=memory&cache=shared"
            if self.sqlite_path is None
            else str(self.sqlite_path)
        )
        return {
            "PERSISTENCE_MODULE": SQLITE_PERSISTENCE_MODULE,
            "SQLITE_DBNAME": database,
            "SQLITE_LOCK_TIMEOUT": str(max(1, round(self.lock_timeout))),
            "TRANSCODER_TOPIC": TRANSCODER_TOPIC,
            "AGGREGATE_CACHE_MAXSIZE": str(AGGREGATE_CACHE_SIZE),
            "AGGREGATE_CACHE_FASTFORWARD": "n",
            "DEEPCOPY_FROM_AGGREGATE_CACHE": "n",
        }


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
