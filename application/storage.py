"""How the store reaches its storage: the `Backend` interface, and the registry of backends.

A backend is one folder under `adapters/storage/` plus one registry line per URL scheme it
takes: an entry point of the group `transcripts.backends` (pyproject.toml), named after
the scheme and naming the backend object, with the extra that installs its driver:

    postgresql = "transcripts.adapters.storage.postgres:BACKEND [postgres]"

The store finds a URL's backend by its scheme here, so that nothing of a backend (its name,
its error texts, its tables) appears outside its folder, and a backend can be added —
by this package or another one — without touching the store.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from ..config import Settings, as_url, default_url
from ..domain.errors import StorageError
from ..domain.id_index import IndexChanges, IndexEntry, IndexState

if TYPE_CHECKING:
    from eventsourcing.application import Application

    from ..projections.projector import Projector
    from ..projections.views import TranscriptViews

ENTRY_POINT_GROUP = "transcripts.backends"


class Failure(Enum):
    """What a failed database call means for the write that made it."""

    CONFLICT = "conflict"  # another writer stored that version first: load again, retry
    BUSY = "busy"  # the lock was not obtained in time: retry after a while
    DROPPED = "dropped"  # the connection was lost: retry at once, on another
    LASTING = "lasting"  # waiting does not cure it (a full disk, a read-only file): fail


class LogTransaction(Protocol):
    """What a write transaction does with the log (see `Backend.writing`), and with the
    write side's index of message ids that it keeps (`domain.id_index`)."""

    def read_ahead(self, stream_id: UUID, *, after: int | None) -> None:
        """Say the reads a write of the stream will make first: its `index_state`, and its
        `events` after version `after` (None: unknown), so that a backend across a network
        can send them together."""

    def events(self, stream_id: UUID, *, after: int) -> list[StoredEvent]:
        """The stream's events after version `after`, in order."""

    def first_event(self, stream_id: UUID) -> StoredEvent | None:
        """The stream's first stored event (None: no such stream)."""

    def event(self, stream_id: UUID, version: int) -> StoredEvent | None:
        """The stream's event of that version, if it is stored."""

    def index_state(self, stream_id: UUID) -> IndexState:
        """The version of the stream its index reflects, and the first of its events whose
        topic cannot be read."""

    def indexed(self, stream_id: UUID, message_ids: Sequence[str]) -> dict[str, IndexEntry]:
        """The index entries of the stream's message ids among these (the others: never
        stored)."""

    def write_index(self, stream_id: UUID, changes: IndexChanges) -> None:
        """Apply what events did to the stream's index."""

    def insert(self, events: Sequence[StoredEvent]) -> None:
        """Insert events (fenced: a version stored already, or below the stream's last, is
        the library's IntegrityError)."""

    def delete_before(self, stream_id: UUID, version: int) -> None:
        """Delete the stream's events below `version` (an erasure's)."""


class IndexReads(Protocol):
    """A stream's index of message ids as stored, read in one snapshot."""

    def version(self) -> int | None:
        """The version of the stream the index reflects (None: never indexed)."""

    def entries(self, message_ids: Sequence[str]) -> dict[str, IndexEntry]:
        """The entries of these ids (an id the index does not hold is left out)."""

    def count(self) -> int:
        """How many ids the index holds."""

    def keys(self) -> Iterator[bytes]:
        """Its id keys (`domain.id_index.id_key`) in order, read a page at a time."""


class Location(Protocol):
    """Where a store is, as its backend reads its URL."""

    @property
    def url(self) -> str:
        """The URL without its password: safe to print."""

    @property
    def kind(self) -> str:
        """The backend's name for people: memory, sqlite, postgresql."""

    @property
    def path(self) -> Path | None:
        """The store's file, if it is one."""

    @property
    def identity(self) -> Hashable:
        """Equal for two locations of the same store."""

    @property
    def persistent(self) -> bool:
        """Whether the store outlives the process (memory:// does not)."""


@dataclass(frozen=True)
class StoreConfig:
    """A store's URL, read by its backend, and its settings."""

    url: str  # as given, but without a password
    location: Location
    backend: Backend = field(repr=False, compare=False)
    settings: Settings = Settings()

    @classmethod
    def from_url(
        cls,
        url: str | None = None,
        *,
        lock_timeout: float | None = None,
        cipher_key: str | None = None,
        durability: str | None = None,
    ) -> StoreConfig:
        """`url` (else `$TRANSCRIPTS_URL`, else the default file) with the settings given
        (else the environment's)."""
        settings = Settings.resolve(
            lock_timeout=lock_timeout, cipher_key=cipher_key, durability=durability
        )
        if url is not None and not isinstance(url, str):
            raise StorageError(f"a store URL is a string: {url!r}")
        url = as_url(url or default_url())
        backend = backend_for(url)
        location = backend.locate(url)
        return cls(location.url, location, backend, settings)

    @property
    def lock_timeout(self) -> float:
        return self.settings.lock_timeout

    @property
    def cipher_key(self) -> str | None:
        return self.settings.cipher_key

    @property
    def durable(self) -> bool:
        """Whether an acknowledged write is on disk (durability "full")."""
        return self.settings.durability == "full"

    def library_env(self) -> dict[str, str]:
        """The event-sourcing library's settings for this store."""
        return self.backend.library_env(self)


class Backend(ABC):
    """A storage backend: what the store needs of a kind of database.

    The event log is the library's persistence module of the backend (`library_env`); the
    views, erasure and clean-up of deleted bytes are the backend's own.
    """

    url_forms: ClassVar[tuple[str, ...]]  # the URLs it takes, for error messages

    @abstractmethod
    def locate(self, url: str) -> Location:
        """Read a URL of one of the backend's schemes; StorageError if it is malformed."""

    @abstractmethod
    def library_env(self, config: StoreConfig) -> dict[str, str]:
        """The library's environment for a store (persistence module, codec, cipher)."""

    @abstractmethod
    def classify(self, error: BaseException) -> Failure:
        """What an error of a database call (a library `PersistenceError`) means."""

    @abstractmethod
    def prepare(self, config: StoreConfig) -> None:
        """Make ready what the library needs before it connects (files, a reachable
        server); StorageError saying what is wrong otherwise."""

    @abstractmethod
    def check_store(self, config: StoreConfig) -> None:
        """Check, reading only, that a store is there: StoreNotFoundError if there is none
        (nothing to open: a missing file, a database without the store's log),
        NotAStoreError if something else is there, StorageError if it cannot be read."""

    @abstractmethod
    def open_views(self, log: Application[UUID], projector: type[Projector]) -> TranscriptViews:
        """The views of the store, created if new, kept up to date from the log."""

    @abstractmethod
    def writing(self, log: Application[UUID]) -> AbstractContextManager[LogTransaction]:
        """A write transaction on the log that holds the store's write lock from its start,
        committed at the end. Writers of every process take the lock in turn."""

    @abstractmethod
    def reading_lightly(self, log: Application[UUID]) -> AbstractContextManager[None]:
        """While the block runs, this thread's reads keep little in the store's caches in
        this process (a long read that visits each page once: verify's)."""

    @abstractmethod
    def reading_index(
        self, log: Application[UUID], stream_id: UUID
    ) -> AbstractContextManager[IndexReads]:
        """The write side's index of a stream as stored (`domain.id_index`), read by look-ups
        in one snapshot while the block runs (never held whole)."""

    @abstractmethod
    def reset_index(self, log: Application[UUID]) -> None:
        """Drop the write side's whole index, under the write lock: the next write of each
        session indexes it anew from its log."""

    @abstractmethod
    def durability(self, log: Application[UUID]) -> dict[str, str]:
        """How the log's writes commit, as the database reports it (its own names and
        values: SQLite's `journal_mode` and `synchronous`, say)."""

    @abstractmethod
    def scrub(self, log: Application[UUID]) -> None:
        """After an erasure (its views caught up): leave none of the deleted bytes where the
        backend can reach them (indexes, free space, the write-ahead log)."""


def backend_for(url: str) -> Backend:
    """The backend registered for the URL's scheme."""
    scheme, separator, _ = url.partition("://")
    entry = _registered().get(scheme.lower()) if separator else None
    if entry is None:
        raise StorageError(f"unsupported store URL {without_password(url)!r}: use {_forms()}")
    return _load(entry, f"{without_password(url)} needs")


@cache
def _registered() -> dict[str, EntryPoint]:
    return {entry.name: entry for entry in entry_points(group=ENTRY_POINT_GROUP)}


def _load(entry: EntryPoint, needs: str) -> Backend:
    """The backend an entry point names; a StorageError naming the missing package and the
    extra that installs it when its driver is not installed."""
    try:
        backend = entry.load()
    except ImportError as missing:
        package = (missing.name or "a package").split(".")[0]
        extra = entry.extras[0] if entry.extras else ""
        hint = f": pip install 'transcript-store[{extra}]'" if extra else ""
        raise StorageError(f"{needs} {package}{hint}") from None
    if not isinstance(backend, Backend):
        raise StorageError(f"the storage backend {entry.value!r} is not a Backend")
    return backend


def _forms() -> str:
    """Every registered backend's URL forms, for an error message."""
    forms: list[str] = []
    for entry in _registered().values():
        try:
            found = _load(entry, "").url_forms
        except StorageError:
            found = (f"{entry.name}://…",)
        forms += [form for form in found if form not in forms]
    return ", ".join(forms[:-1]) + f" or {forms[-1]}" if len(forms) > 1 else "".join(forms)


def without_password(url: str) -> str:
    """The URL with its password, if any, replaced by ***."""
    scheme, separator, rest = url.partition("://")
    credentials, at, place = rest.rpartition("@")
    if not separator or not at or ":" not in credentials:
        return url
    return f"{scheme}://{credentials.split(':', 1)[0]}:***@{place}"
