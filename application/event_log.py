"""The write side: the event-sourcing application that stores Transcript aggregates.

Commands load a Transcript (cached; replayed from its events on a miss), let it decide, and
save its new events in one transaction. A failed save (a version conflict with another
writer, a lock not obtained) evicts the cached copy and is retried with exponential backoff
and full jitter until the lock timeout: safe, because message ids make every write idempotent.

`erase` is the one write that removes events: the backend replaces the session's stream by
its tombstone in one transaction (see `StorageBackend.replace_stream`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import fields
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError, PersistenceError, StoredEvent
from eventsourcing.utils import Environment, EnvType

from ..domain.errors import SessionNotFoundError, StorageError, TranscriptError
from ..domain.transcript import Transcript, transcript_id
from . import backoff
from .storage import Failure, StoreConfig

T = TypeVar("T")
ReplaceStream = Callable[[Application[UUID], StoredEvent], None]

_LOCK_STRIPES = 64
_CACHE = {  # recently used transcripts stay in memory; a failed save evicts its transcript
    "AGGREGATE_CACHE_MAXSIZE": "128",
    "AGGREGATE_CACHE_FASTFORWARD": "n",
    "DEEPCOPY_FROM_AGGREGATE_CACHE": "n",
}
_SESSION_PAGE = 500
_FIRST_TOPICS = [Transcript.Started.TOPIC, Transcript.Erased.TOPIC]  # a stream begins with one
# What decoding or replaying a damaged stored event raises (the library's decoding errors
# are ValueErrors; an event of the wrong shape fails as it is built or applied).
UNREADABLE = (ValueError, TypeError, AttributeError, KeyError)


class TranscriptLog(Application[UUID]):
    """The event-sourcing application that stores Transcript aggregates."""

    name = "transcripts"

    def __init__(self, config: StoreConfig) -> None:
        self.lock_timeout = config.lock_timeout
        self.classify = config.backend.classify
        self._locks = [threading.Lock() for _ in range(_LOCK_STRIPES)]
        super().__init__(env={**config.library_env(), **_CACHE})

    def construct_env(self, name: str, env: EnvType | None = None) -> Environment:
        # Configuration comes from the store URL only, never from stray variables.
        return Environment(name, dict(env or {}))

    def record(self, transcript: Transcript) -> None:
        """Save a transcript's pending events in one transaction and cache the transcript.

        The library's `save` does the same through generic machinery (processing events,
        protocol checks, snapshot and notification hooks) this store does not use; on the
        append path that machinery cost as much as the SQL.
        """
        events = transcript.collect_events()
        self.recorder.insert_events([self.mapper.to_stored_event(event) for event in events])
        if self.repository.cache is not None:
            self.repository.cache.put(transcript.id, transcript)

    def start(self, session_id: str, **arguments: Any) -> None:
        """Start a session, or check it was started with the same arguments."""
        error: PersistenceError | None = None
        for _ in backoff.attempts(self.lock_timeout):
            try:
                existing = self.load(session_id)
            except SessionNotFoundError:
                error = self._try_save(Transcript.start(session_id, **arguments))
                if error is None:
                    return
                continue
            if existing.started_with(**arguments):
                return
            raise TranscriptError(
                f"session {session_id!r} was already started with other arguments"
            )
        raise self._timed_out(session_id, error)

    def session_events(self, session_id: str, lte: int | None = None) -> list[Transcript.Event]:
        try:
            stored = self.events.get(transcript_id(session_id), lte=lte)
            events = [_complete(event) for event in stored]  # type: ignore[arg-type]
        except UNREADABLE as error:
            raise corrupt_session(session_id, error) from error
        if not events:
            raise SessionNotFoundError(session_id)
        return events  # type: ignore[return-value]

    def readable_events(self, session_id: str) -> Iterator[Transcript.Event]:
        """The events of a session that decode (the views quarantine the others)."""
        for stored in self.recorder.select_events(transcript_id(session_id)):
            try:
                yield self.mapper.to_domain_event(stored)  # type: ignore[misc]
            except Exception:
                continue

    def load(self, session_id: str, min_version: int = 0) -> Transcript:
        aggregate_id = transcript_id(session_id)
        repository = self.repository
        try:
            transcript: Transcript = repository.get(aggregate_id, projector_func=_replay)
            if transcript.version < min_version:  # cached copy older than what the caller saw
                self._evict(aggregate_id)
                transcript = repository.get(aggregate_id, projector_func=_replay)
        except AggregateNotFoundError:
            raise SessionNotFoundError(session_id) from None
        except PersistenceError as error:
            raise StorageError(f"cannot read session {session_id!r}: {error}") from error
        except UNREADABLE as error:
            self._evict(aggregate_id)
            raise corrupt_session(session_id, error) from error
        return transcript

    def _try_save(self, transcript: Transcript) -> PersistenceError | None:
        """Save pending events; return the error of a failed save (a conflict, a lock timeout)."""
        try:
            self.record(transcript)
        except PersistenceError as error:
            self._evict(transcript.id)
            self._fail_if_lasting(transcript.session_id, error)
            return error
        except BaseException:  # the cached aggregate holds events that were not saved
            self._evict(transcript.id)
            raise
        return None

    def write(self, session_id: str, command: Callable[[Transcript], T], min_version: int = 0) -> T:
        """Run a command on the session's aggregate and save it, retrying under contention."""
        aggregate_id = transcript_id(session_id)
        error: PersistenceError | None = None
        with self._locks[hash(aggregate_id) % _LOCK_STRIPES]:
            for _ in backoff.attempts(self.lock_timeout):
                transcript = self.load(session_id, min_version)
                try:
                    result = command(transcript)
                except BaseException:
                    self._evict(aggregate_id)
                    raise
                if not transcript.pending_events:
                    return result
                error = self._try_save(transcript)
                if error is None:
                    return result
        raise self._timed_out(session_id, error)

    def erase(self, session_id: str, replace: ReplaceStream) -> tuple[Transcript.Erased, bool]:
        """Replace the session's stream by its tombstone; return it, and whether an earlier
        call had erased it already (then nothing is written).

        `replace(log, tombstone)` inserts the tombstone and deletes every earlier event of the
        stream in one transaction; a version conflict with a concurrent write is retried.
        """
        aggregate_id = transcript_id(session_id)
        error: PersistenceError | None = None
        with self._locks[hash(aggregate_id) % _LOCK_STRIPES]:
            for _ in backoff.attempts(self.lock_timeout):
                transcript = self.load(session_id)
                if transcript.erasure is not None:
                    return transcript.erasure, True
                tombstone = transcript.erase()
                events = transcript.collect_events()
                try:
                    replace(self, self.mapper.to_stored_event(events[0]))
                except PersistenceError as failed:
                    self._evict(aggregate_id)
                    self._fail_if_lasting(session_id, failed)
                    error = failed
                    continue
                except BaseException:
                    self._evict(aggregate_id)
                    raise
                if self.repository.cache is not None:
                    self.repository.cache.put(aggregate_id, transcript)
                return tombstone, False
        raise self._timed_out(session_id, error)

    def _timed_out(self, session_id: str, error: PersistenceError | None) -> StorageError:
        cause = (
            "other writers kept winning the race" if isinstance(error, IntegrityError) else error
        )
        return StorageError(
            f"could not write session {session_id!r} within {self.lock_timeout:g} s: {cause}"
        )

    def _fail_if_lasting(self, session_id: str, error: PersistenceError) -> None:
        """Fail at once where waiting does not cure (a full disk, a read-only file)."""
        if self.classify(error) is Failure.LASTING:
            raise StorageError(f"cannot write session {session_id!r}: {error}") from error

    def _evict(self, aggregate_id: UUID) -> None:
        cache = self.repository.cache
        if cache is not None:
            try:
                cache.get(aggregate_id, evict=True)
            except KeyError:
                pass

    def session_ids(self) -> Iterator[str]:
        recorder = self.recorder
        position: int | None = None
        while True:
            page = recorder.select_notifications(
                position, _SESSION_PAGE, topics=_FIRST_TOPICS, inclusive_of_start=False
            )
            for notification in page:
                try:
                    started = self.mapper.to_domain_event(notification)
                except Exception:  # a corrupt Started event: the views quarantined it
                    continue
                yield started.session_id  # type: ignore[attr-defined]
            if len(page) < _SESSION_PAGE:
                return
            position = page[-1].id


def _complete(event: Transcript.Event) -> Transcript.Event:
    """The event, if it has every field of its type (a damaged one decodes without some)."""
    missing = [f.name for f in fields(event) if f.name not in vars(event)]
    if missing:
        raise TypeError(
            f"{type(event).__name__} at originator_version {event.originator_version} "
            f"has no {', '.join(missing)}"
        )
    return event


def corrupt_session(session_id: str, error: BaseException) -> StorageError:
    return StorageError(
        f"cannot read session {session_id!r}: a stored event is corrupt "
        f"({type(error).__name__}: {error}); the views leave it out (quarantined)"
    )


def _replay(transcript: Transcript | None, events: Iterable[Transcript.Event]) -> Transcript | None:
    for event in events:
        try:
            transcript = event.mutate(transcript)
        except UNREADABLE as error:  # a damaged event, decoded but not applicable
            raise TypeError(
                f"cannot apply {type(event).__name__} at originator_version "
                f"{event.originator_version}: {error}"
            ) from error
    return transcript
