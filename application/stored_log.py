"""A store's event log as stored, record by record: for copying a whole store.

`TranscriptStore.event_log` is a store's own log; `StoredLog.open(config)` reads another
store's log without opening it as a store (nothing is created or written there, its views
are not touched). Records are the stored events as they are — stream, version, topic and
encoded state, which holds the timestamps and message ids — so a copy is the same log.
Between stores with different cipher keys, `recoded` decodes with one key and encodes with
the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar
from uuid import UUID

from eventsourcing.persistence import Notification, PersistenceError, StoredEvent

from ..domain.errors import StorageError
from ..domain.transcript import Transcript
from .decoding import UNREADABLE
from .event_log import TranscriptLog
from .storage import StoreConfig

T = TypeVar("T")
PAGE_SIZE = 1000
_FIRST_TOPICS = [Transcript.Started.TOPIC, Transcript.Erased.TOPIC]  # a stream begins with one


@dataclass(frozen=True)
class LogRecord:
    """One stored event: its position in the log, its stream, version, topic and state."""

    position: int
    stream_id: UUID
    version: int
    topic: str
    state: bytes

    @classmethod
    def of(cls, notification: Notification) -> LogRecord:
        stream = notification.originator_id
        return cls(
            notification.id,
            stream if isinstance(stream, UUID) else UUID(str(stream)),
            notification.originator_version,
            notification.topic,
            bytes(notification.state),
        )

    def stored_event(self) -> StoredEvent:
        return StoredEvent(self.stream_id, self.version, self.topic, self.state)


class StoredLog:
    """The event log of one store."""

    def __init__(self, log: TranscriptLog, url: str, *, owned: bool = False) -> None:
        self._log = log
        self.url = url
        self._owned = owned

    @classmethod
    def open(cls, config: StoreConfig) -> StoredLog:
        """The log of the store `config` names (`StoreConfig.from_url(url, cipher_key=…)`),
        to read: nothing there is created or written (NotAStoreError if there is no
        store). Close it when done."""
        config.backend.check_store(config)
        try:
            return cls(TranscriptLog(config), config.url, owned=True)
        except PersistenceError as error:
            raise StorageError(f"cannot open {config.url}: {error}") from error

    def close(self) -> None:
        if self._owned:
            self._log.close()

    def __enter__(self) -> StoredLog:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def head(self) -> int:
        """The last position of the log (0 when it is empty)."""
        return self._read(lambda: self._log.recorder.max_notification_id() or 0)

    def pages(self, after: int = 0) -> Iterator[list[LogRecord]]:
        """The records after position `after`, in log order, a page at a time (never the
        whole log in memory)."""
        position = after
        while True:
            page = self._notifications(position)
            if not page:
                return
            yield [LogRecord.of(notification) for notification in page]
            position = page[-1].id

    def streams(self) -> Iterator[tuple[UUID, str]]:
        """(stream id, session id) of every session, by its first event (Started, or the
        Erased tombstone of a forgotten session); a corrupt one is named by its stream id."""
        position = 0
        while True:
            page = self._notifications(position, _FIRST_TOPICS)
            for notification in page:
                record = LogRecord.of(notification)
                try:
                    name = str(self.decode(record).session_id)  # type: ignore[attr-defined]
                except StorageError:
                    name = str(record.stream_id)
                yield record.stream_id, name
            if len(page) < PAGE_SIZE:
                return
            position = page[-1].id

    def has_stream(self, stream_id: UUID) -> bool:
        return bool(self._read(lambda: self._log.recorder.select_events(stream_id, limit=1)))

    def decode(self, record: LogRecord) -> Transcript.Event:
        """The event a record holds; StorageError naming it if it cannot be decoded (a
        damaged record, or another cipher key)."""
        try:
            return self._log.mapper.to_domain_event(record.stored_event())  # type: ignore[return-value]
        except (*UNREADABLE, PersistenceError) as error:
            raise StorageError(
                f"cannot decode event {record.version} of stream {record.stream_id} in "
                f"{self.url}: {type(error).__name__}: {error}"
            ) from error

    def recoded(self, records: Sequence[LogRecord], source: StoredLog) -> list[LogRecord]:
        """`source`'s records as this log stores them: decoded with its key, encoded with
        this log's."""
        recoded = []
        for record in records:
            stored = self._log.mapper.to_stored_event(source.decode(record))
            recoded.append(replace(record, topic=stored.topic, state=stored.state))
        return recoded

    def _notifications(self, after: int, topics: Sequence[str] = ()) -> Sequence[Notification]:
        recorder = self._log.recorder
        return self._read(
            lambda: recorder.select_notifications(
                after, PAGE_SIZE, topics=topics, inclusive_of_start=False
            )
        )

    def _read(self, call: Callable[[], T]) -> T:
        return self._log.calls.run(call, f"read the log of {self.url}")

    def insert(self, records: Sequence[LogRecord]) -> None:
        """Append records to this log as they are, in one transaction."""
        self._log.insert_records([record.stored_event() for record in records])
