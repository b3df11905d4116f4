"""The SQLite backend: `sqlite:///relative.db`, `sqlite:////absolute/path.db` and `memory://`.

The log is the library's SQLite module with a statement cache (`factory`), in a file that
`files` prepares (private, WAL mode). The views live in the same file: the dialect-neutral
views of `..sql` with SQLite's `dialect` and its FTS5 `search`. Erasure and scrubbing are
`erasure`'s. `memory://` is an in-memory database shared by the store's connections, gone
when the store closes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from uuid import UUID, uuid4
from weakref import WeakKeyDictionary

from eventsourcing.application import Application
from eventsourcing.persistence import IntegrityError
from eventsourcing.sqlite import SQLiteApplicationRecorder
from eventsourcing.utils import get_topic

from ....application.storage import Backend, Failure, StoreConfig
from ....domain.errors import StorageError
from ....projections.projector import Projector
from ..environment import shared_env
from ..internals import CachingSQLiteConnectionPool
from ..sql.log_index import IndexTypes, LogIndex, StoredIndex
from ..sql.search import NoSearch
from ..sql.views import SQLTranscriptViews
from . import erasure, files
from .dialect import SQLiteDialect
from .factory import SYNCHRONOUS, Factory
from .search import FTS5Index
from .transactions import SQLiteLogTransaction, log_transaction

MEMORY_URL = "memory://"
FILE_SCHEME = "sqlite:///"
_SYNCHRONOUS_NAMES = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}  # PRAGMA synchronous
# Errors that waiting for the lock does not cure (primary result codes): a read-only file,
# an I/O error, a full disk.
_LASTING_CODES = frozenset({sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL})
INDEX_TYPES = IndexTypes(
    stream="TEXT",
    digest="BLOB",
    integer="INTEGER",
    boolean="INTEGER",
    table_options=" WITHOUT ROWID",
)


@dataclass(frozen=True)
class SQLiteLocation:
    url: str
    path: Path | None  # None: memory://
    memory_id: str = field(default_factory=lambda: uuid4().hex, compare=False)

    @property
    def kind(self) -> str:
        return "memory" if self.path is None else "sqlite"

    @property
    def identity(self) -> Hashable:
        return self.memory_id if self.path is None else self.path.resolve()

    @property
    def persistent(self) -> bool:
        return self.path is not None


class SQLiteBackend(Backend):
    url_forms = ("memory://", "sqlite:///relative.db", "sqlite:////absolute/path.db")

    def __init__(self) -> None:
        self._indexes: WeakKeyDictionary[Application[UUID], LogIndex] = WeakKeyDictionary()

    def locate(self, url: str) -> SQLiteLocation:
        if url == MEMORY_URL:
            return SQLiteLocation(url, None)
        path = url.removeprefix(FILE_SCHEME) if url.startswith(FILE_SCHEME) else ""
        if not path or path.endswith("/"):
            raise StorageError(f"no database file in URL {url!r}")
        return SQLiteLocation(url, Path(path))

    def library_env(self, config: StoreConfig) -> dict[str, str]:
        location = self._location(config)
        database = (
            f"file:transcripts-{location.memory_id}?mode=memory&cache=shared"
            if location.path is None
            else str(location.path)
        )
        return {
            "PERSISTENCE_MODULE": get_topic(Factory),
            "SQLITE_DBNAME": database,
            "SQLITE_LOCK_TIMEOUT": str(max(1, round(config.lock_timeout))),
            SYNCHRONOUS: "FULL" if config.durable else "NORMAL",
            **shared_env(config),
        }

    def classify(self, error: BaseException) -> Failure:
        if isinstance(error, IntegrityError):
            return Failure.CONFLICT
        cause = error.__cause__
        code = getattr(cause, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in _LASTING_CODES or isinstance(cause, OSError):
            return Failure.LASTING
        return Failure.BUSY

    def prepare(self, config: StoreConfig) -> None:
        path = self._location(config).path
        if path is not None:
            files.prepare(path, config.lock_timeout)

    def check_store(self, config: StoreConfig) -> None:
        path = self._location(config).path
        if path is not None:
            files.check_store(path, config.url)

    def open_views(self, log: Application[UUID], projector: type[Projector]) -> SQLTranscriptViews:
        recorder = log.recorder
        assert isinstance(recorder, SQLiteApplicationRecorder)
        dialect = SQLiteDialect(recorder.datastore, recorder.events_table_name)
        search = NoSearch() if log.mapper.cipher is not None else FTS5Index()
        views = SQLTranscriptViews(dialect, search, mapper=log.mapper, projector=projector)
        views.create_tables()
        erasure.ensure_fence(recorder)
        self._index(log)
        return views

    def writing(
        self, log: Application[UUID], stream: UUID | None = None
    ) -> AbstractContextManager[SQLiteLogTransaction]:
        """One lock for the whole file, whatever `stream`."""
        assert isinstance(log.recorder, SQLiteApplicationRecorder)
        return log_transaction(log.recorder, self._index(log))

    def reading_lightly(self, log: Application[UUID]) -> AbstractContextManager[None]:
        assert isinstance(log.recorder, SQLiteApplicationRecorder)
        pool = log.recorder.datastore.pool
        assert isinstance(pool, CachingSQLiteConnectionPool)
        return pool.lightly()

    @contextmanager
    def reading_index(self, log: Application[UUID], stream_id: UUID) -> Iterator[StoredIndex]:
        assert isinstance(log.recorder, SQLiteApplicationRecorder)
        with log.recorder.datastore.transaction(commit=False) as cursor:
            yield StoredIndex(self._index(log), cursor, stream_id)

    def reset_index(self, log: Application[UUID]) -> None:
        with self.writing(log) as tx:
            tx.log_index.reset(tx.cursor)

    def durability(self, log: Application[UUID]) -> dict[str, str]:
        """Read from a connection the log writes with."""
        assert isinstance(log.recorder, SQLiteApplicationRecorder)
        with log.recorder.datastore.get_connection(commit=False) as connection:
            cursor = connection.cursor()
            cursor.execute("PRAGMA journal_mode")
            journal = cursor.fetchone()[0]
            cursor.execute("PRAGMA synchronous")
            level = cursor.fetchone()[0]
        return {
            "journal_mode": str(journal).lower(),
            "synchronous": _SYNCHRONOUS_NAMES.get(level, str(level)),
        }

    def scrub(self, log: Application[UUID]) -> None:
        erasure.scrub(log)

    def _index(self, log: Application[UUID]) -> LogIndex:
        """The log's index of message ids, created with its tables if they are missing."""
        index = self._indexes.get(log)
        if index is None:
            recorder = log.recorder
            assert isinstance(recorder, SQLiteApplicationRecorder)
            index = LogIndex(
                recorder.events_table_name,
                stream_key=lambda stream_id: stream_id.hex,
                flag=int,
                cipher=log.mapper.cipher,
                chained_topics=True,
            )
            _create(recorder, index)
            _adopt_keys(recorder, index)
            self._indexes[log] = index
        return index

    @staticmethod
    def _location(config: StoreConfig) -> SQLiteLocation:
        assert isinstance(config.location, SQLiteLocation)
        return config.location


def _create(recorder: SQLiteApplicationRecorder, index: LogIndex) -> None:
    """Create the write side's index (`sql.log_index`) if some of it is missing, and drop
    the index of unknown topics a release before made (another list or condition)."""
    names = index.names()
    with recorder.datastore.transaction(commit=False) as c:
        c.execute(
            f"SELECT COUNT(*) FROM sqlite_master WHERE name IN ({', '.join('?' * len(names))})",
            names,
        )
        if c.fetchone()[0] == len(names):
            return
    with recorder.datastore.transaction(commit=True) as c:
        for statement in index.create_statements(INDEX_TYPES):
            c.execute(statement)
        c.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' "
            "AND substr(name, 1, ?) = ? AND name <> ?",
            (len(index.topics_prefix), index.topics_prefix, index.topics_index),
        )
        for (retired,) in c.fetchall():
            c.execute(f'DROP INDEX "{retired}"')


def _adopt_keys(recorder: SQLiteApplicationRecorder, index: LogIndex) -> None:
    """Drop an index of a release before's keys, once, under the write lock."""
    with recorder.datastore.transaction(commit=False) as c:
        if index.keys_current(c):
            return
    with log_transaction(recorder, index) as tx:
        index.adopt_keys(tx.cursor)
