"""Errors raised by transcript-store. All of them subclass `TranscriptError`."""

from __future__ import annotations

from datetime import UTC, datetime


class TranscriptError(Exception):
    """Base class of every error this library raises on purpose."""


class SessionNotFoundError(TranscriptError, LookupError):
    """The session was never started."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} was never started")
        self.session_id = session_id


class SessionErasedError(TranscriptError):
    """The session was erased (`forget`): its content is gone, only the tombstone is left."""

    def __init__(self, session_id: str, erased_at: datetime) -> None:
        at = erased_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        super().__init__(f"session {session_id!r} was erased at {at}")
        self.session_id = session_id
        self.erased_at = erased_at


class InvalidMessageError(TranscriptError, ValueError):
    """A message is not a JSON object with a known role, or holds a non-JSON value."""


class MessageConflictError(TranscriptError):
    """A stored message id was given again with different content."""

    def __init__(self, session_id: str, message_id: str) -> None:
        super().__init__(
            f"message {message_id!r} of session {session_id!r} is already stored "
            "with different content (give an edited message a new id)"
        )
        self.session_id = session_id
        self.message_id = message_id


class VersionConflictError(TranscriptError):
    """A fenced write found the session at another version than the caller expected."""

    def __init__(self, session_id: str, expected: int, actual: int) -> None:
        super().__init__(
            f"session {session_id!r} is at version {actual}, not {expected} as expected "
            "(another writer stored events since: read it again)"
        )
        self.session_id = session_id
        self.expected = expected
        self.actual = actual


class StorageError(TranscriptError):
    """The store could not be read or written (lock timeout, I/O error, bad URL)."""


class NotAStoreError(StorageError):
    """The URL names no store, or a database or file that is not a transcript store."""


class StoreNotFoundError(NotAStoreError):
    """No store is there to open, and the caller did not ask to create one
    (`TranscriptStore.open(url, create=False)`): a SQLite file that does not exist or has no
    log, a PostgreSQL database without the store's tables."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"no store at {url}: {reason}")
        self.url = url
        self.reason = reason


class EncryptionKeyError(StorageError):
    """The cipher key is missing, malformed, or not the key the store was created with."""


class MessageNotFoundError(TranscriptError, LookupError):
    """The session never stored a message with this id."""

    def __init__(self, session_id: str, message_id: str) -> None:
        super().__init__(f"session {session_id!r} has no message {message_id!r}")
        self.session_id = session_id
        self.message_id = message_id


class CompactionNotFoundError(TranscriptError, LookupError):
    """The session has no compaction attempt with this id."""

    def __init__(self, session_id: str, compaction_id: str) -> None:
        super().__init__(f"session {session_id!r} has no compaction attempt {compaction_id!r}")
        self.session_id = session_id
        self.compaction_id = compaction_id


class InvalidSearchError(TranscriptError, ValueError):
    """A search query is empty or not valid full-text query syntax."""
