"""Settings: where the store is by default, and what the environment or the caller sets.

- `TRANSCRIPTS_URL`: the store URL when none is given (else `default_path()`, a SQLite file
  under the user's data directory). A bare file path is a SQLite file (`as_url`). Which URLs
  work is up to the storage backends (see `application.storage`).
- `TRANSCRIPTS_LOCK_TIMEOUT` (seconds, default 30, at most a day): how long a call waits
  for the database lock, or retries a dropped connection, before it fails with StorageError.
- `TRANSCRIPTS_DURABILITY` (`full`, the default, or `normal`): whether an acknowledged write
  is on disk (`full`: SQLite `synchronous=FULL`, PostgreSQL `synchronous_commit=on`) or may
  be lost on power loss, never corrupted or half-applied (`normal`: SQLite
  `synchronous=NORMAL`, PostgreSQL `synchronous_commit=off`), for speed.
- `TRANSCRIPTS_CIPHER_KEY`: encrypt the store at rest (AES-GCM) with this key, made by
  `transcripts generate-key`; needs the `encryption` extra. A store is encrypted, or not,
  from its creation (see `adapters/storage/sealing.py`).

Keyword arguments beat the environment.
"""

from __future__ import annotations

import binascii
import os
import secrets
from base64 import b64decode, b64encode
from dataclasses import dataclass, field
from pathlib import Path

from platformdirs import user_data_path

from .domain.errors import EncryptionKeyError, StorageError

URL_VARIABLE = "TRANSCRIPTS_URL"
LOCK_TIMEOUT_VARIABLE = "TRANSCRIPTS_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 30.0
MAX_LOCK_TIMEOUT = 86_400  # a day
DURABILITY_VARIABLE = "TRANSCRIPTS_DURABILITY"
DURABILITIES = ("full", "normal")
CIPHER_KEY_VARIABLE = "TRANSCRIPTS_CIPHER_KEY"
CIPHER_KEY_SIZES = (16, 24, 32)  # bytes: AES-128, AES-192, AES-256


def default_path() -> Path:
    """Where the store lives when no URL is given."""
    return user_data_path("transcripts", appauthor=False) / "transcripts.db"


def default_url() -> str:
    return os.environ.get(URL_VARIABLE) or f"sqlite:///{default_path()}"


def as_url(url: str) -> str:
    """A store URL; a bare file path (`store.db`, `./x.db`, `/abs/x.db`, `~/x.db`: no
    `scheme://`) is a SQLite file, `~` expanded."""
    if "://" in url:
        return url
    return f"sqlite:///{Path(url).expanduser()}"


@dataclass(frozen=True)
class Settings:
    """How a store behaves, whatever its backend."""

    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    cipher_key: str | None = field(default=None, repr=False)
    durability: str = "full"

    @classmethod
    def resolve(
        cls,
        *,
        lock_timeout: float | None = None,
        cipher_key: str | None = None,
        durability: str | None = None,
    ) -> Settings:
        """The settings given, else the environment's; checked."""
        return cls(_lock_timeout(lock_timeout), _cipher_key(cipher_key), _durability(durability))


def new_cipher_key() -> str:
    """A random AES-256 key, as `TRANSCRIPTS_CIPHER_KEY` takes it."""
    return b64encode(secrets.token_bytes(max(CIPHER_KEY_SIZES))).decode()


def _cipher_key(given: str | None) -> str | None:
    """The key given, else the environment's; checked to be a key `generate-key` makes."""
    if given is not None and not isinstance(given, str):
        raise EncryptionKeyError(f"a cipher key is a string (base64): {type(given).__name__}")
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
        if isinstance(given, bool) or not isinstance(given, (int, float)):
            raise StorageError(f"the lock timeout is a number of seconds: {given!r}")
    else:
        value = os.environ.get(LOCK_TIMEOUT_VARIABLE) or DEFAULT_LOCK_TIMEOUT
    try:
        timeout = float(value)  # type: ignore[arg-type]
    except (ValueError, OverflowError):
        raise StorageError(
            f"{LOCK_TIMEOUT_VARIABLE} must be a number of seconds: {value!r}"
        ) from None
    if not 0 < timeout <= MAX_LOCK_TIMEOUT:  # NaN too
        raise StorageError(f"the lock timeout is from 0 to {MAX_LOCK_TIMEOUT:,} seconds: {value!r}")
    return timeout


def _durability(given: str | None) -> str:
    value = given if given is not None else os.environ.get(DURABILITY_VARIABLE) or "full"
    if value not in DURABILITIES:
        raise StorageError(f"the durability is 'full' or 'normal': {value!r}")
    return value
