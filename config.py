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

from platformdirs import user_data_path

from .domain.errors import StorageError

URL_VARIABLE = "TRANSCRIPTS_URL"
LOCK_TIMEOUT_VARIABLE = "TRANSCRIPTS_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 30.0
TRANSCODER_TOPIC = "transcripts.adapters.codec:OrjsonTranscoder"
AGGREGATE_CACHE_SIZE = 128


def default_path() -> Path:
    """Where the store lives when no URL is given."""
    return user_data_path("transcripts", appauthor=False) / "transcripts.db"


def default_url() -> str:
    return os.environ.get(URL_VARIABLE) or f"sqlite:///{default_path()}"


@dataclass(frozen=True)
class StoreConfig:
    url: str
    lock_timeout: float
    sqlite_path: Path | None  # None for memory://

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
        """The eventsourcing environment for this store."""
        env = {
            "TRANSCODER_TOPIC": TRANSCODER_TOPIC,
            "AGGREGATE_CACHE_MAXSIZE": str(AGGREGATE_CACHE_SIZE),
            "AGGREGATE_CACHE_FASTFORWARD": "n",
            "DEEPCOPY_FROM_AGGREGATE_CACHE": "n",
        }
        if self.sqlite_path is None:
            return env | {"PERSISTENCE_MODULE": "eventsourcing.popo"}
        return env | {
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": str(self.sqlite_path),
            "SQLITE_LOCK_TIMEOUT": str(max(1, round(self.lock_timeout))),
        }

    def prepare(self) -> None:
        """Create the SQLite file and its directories, private to the user."""
        if self.sqlite_path is None:
            return
        directory = self.sqlite_path.parent
        if not directory.exists():
            try:
                directory.mkdir(mode=0o700, parents=True)
            except OSError as error:
                raise StorageError(f"cannot create {directory}: {error.strerror}") from None
        if not self.sqlite_path.exists():
            try:
                os.close(os.open(self.sqlite_path, os.O_CREAT | os.O_WRONLY, 0o600))
            except OSError as error:
                raise StorageError(f"cannot create {self.sqlite_path}: {error.strerror}") from None


def _lock_timeout(given: float | None) -> float:
    if given is not None:
        value: object = given
    else:
        value = os.environ.get(LOCK_TIMEOUT_VARIABLE) or DEFAULT_LOCK_TIMEOUT
    try:
        timeout = float(value)  # type: ignore[arg-type]
    except ValueError:
        raise StorageError(f"{LOCK_TIMEOUT_VARIABLE} must be a number of seconds: {value!r}") from None
    if timeout <= 0:
        raise StorageError(f"the lock timeout must be positive: {timeout}")
    return timeout
