"""The write side: the event-sourcing application that stores Transcript aggregates.

A command runs in one transaction that holds the store's write lock from its start
(`Backend.writing`): the session's transcript — kept in memory between calls, otherwise
resumed from its first and last events where the views hold the rest (or replayed whole),
before the lock — is brought up to date with the events stored since
(fast-forward, under the lock), the command decides, its events are inserted and projected
into the views (`views`, when set: one commit makes both). Under the lock no other writer
can store a version in between, so a write never loses a race, and writers take the lock in
turn. A failure that waiting cures (the lock not obtained in time,
a dropped connection) is retried until the lock timeout: safe, because the command is run
again on the transcript as stored, and a command is idempotent (its new message ids are
chosen before the first attempt).

A resumed transcript answers appends of new messages at once. Given stored ids, it asks
for them (`IncompleteTranscript`): the transaction is let go, their facts are read from
the views (`recall`) and the command runs again. Any other command replays it whole first.

`erase` is the one write that removes events: it inserts the session's tombstone and
deletes every earlier event of the stream, in the same transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.persistence import Notification, StoredEvent
from eventsourcing.utils import Environment, EnvType

from ..domain.errors import (
    SessionErasedError,
    SessionNotFoundError,
    StorageError,
    TranscriptError,
)
from ..domain.resumption import IncompleteTranscript
from ..domain.transcript import Transcript, transcript_id
from ..projections.views import TranscriptViews
from .decoding import UNREADABLE, corrupt_event, with_every_field
from .retry import StorageCalls
from .storage import LogTransaction, StoreConfig

T = TypeVar("T")
Command = Callable[[Transcript | None, LogTransaction], tuple[T, Transcript | None]]

_LOCK_STRIPES = 64
_SESSION_PAGE = 500
_REPLAY_PAGE = 10_000  # events read at a time when a transcript is replayed
_FIRST_EVENTS = (Transcript.Started, Transcript.Erased)  # a stream begins with one
_FIRST_TOPICS = [event.TOPIC for event in _FIRST_EVENTS]
# Recently written transcripts stay in memory (about 150 bytes a message: ids, content
# hashes), so that a gateway writing thousands of live sessions in turn replays none of
# them; a failed save evicts its transcript.
CACHED_SESSIONS = 4096
_CACHE = {
    "AGGREGATE_CACHE_MAXSIZE": str(CACHED_SESSIONS),
    "AGGREGATE_CACHE_FASTFORWARD": "n",
    "DEEPCOPY_FROM_AGGREGATE_CACHE": "n",
}


class TranscriptLog(Application[UUID]):
    """The event-sourcing application that stores Transcript aggregates."""

    name = "transcripts"
    views: TranscriptViews | None = None  # projected in each write's transaction, if set

    def __init__(self, config: StoreConfig) -> None:
        self.backend = config.backend
        self.calls = StorageCalls(config.backend.classify, config.lock_timeout)
        self._locks = [threading.Lock() for _ in range(_LOCK_STRIPES)]
        super().__init__(env={**config.library_env(), **_CACHE})

    def construct_env(self, name: str, env: EnvType | None = None) -> Environment:
        # Configuration comes from the store URL only, never from stray variables.
        return Environment(name, dict(env or {}))

    # -- commands --------------------------------------------------------------------------

    def start(self, session_id: str, **arguments: Any) -> None:
        """Start a session, or check it was started with the same arguments."""

        def start(transcript: Transcript | None, tx: LogTransaction) -> tuple[None, Transcript]:
            if transcript is None:
                transcript = Transcript.start(session_id, **arguments)
                self._insert(tx, transcript)
            elif not transcript.started_with(**arguments):
                raise TranscriptError(
                    f"session {session_id!r} was already started with other arguments"
                )
            return None, transcript

        self._transact(session_id, start, resumable=True)

    def write(
        self, session_id: str, command: Callable[[Transcript], T], *, appends: bool = False
    ) -> T:
        """Run a command on the session's transcript and store the events it triggers.
        `appends`: the command only appends, so a resumed transcript will do."""

        def write(transcript: Transcript | None, tx: LogTransaction) -> tuple[T, Transcript]:
            if transcript is None:
                raise SessionNotFoundError(session_id)
            result = command(transcript)
            self._insert(tx, transcript)
            return result, transcript

        return self._transact(session_id, write, resumable=appends)

    def erase(self, session_id: str) -> tuple[Transcript.Erased, bool]:
        """Replace the session's stream by its tombstone; return it, and whether an earlier
        call had erased it already (then nothing is written).

        Events that cannot be read are erased too: the tombstone counts what can be read."""
        tries = 0

        def erase(
            transcript: Transcript | None, tx: LogTransaction
        ) -> tuple[tuple[Transcript.Erased, bool], Transcript]:
            nonlocal tries
            tries += 1
            if transcript is None:
                raise SessionNotFoundError(session_id)
            if transcript.erasure is not None:  # on a retry: this call's first try landed
                return (transcript.erasure, tries == 1), transcript
            tombstone = transcript.erase()
            self._insert(tx, transcript)
            tx.delete_before(transcript.id, tombstone.originator_version)
            return (tombstone, False), transcript

        return self._transact(session_id, erase, lenient=True)

    def insert_records(self, events: Sequence[StoredEvent]) -> None:
        """Insert stored events as they are (a copy of another store's log)."""

        def insert() -> None:
            with self.backend.writing(self) as tx:
                tx.insert(events)

        self.calls.run(insert, "write the log")

    # -- queries ---------------------------------------------------------------------------

    def session_events(
        self, session_id: str, lte: int | None = None, gt: int | None = None
    ) -> list[Transcript.Event]:
        stored = self.calls.run(
            lambda: self.recorder.select_events(transcript_id(session_id), gt=gt, lte=lte),
            f"read session {session_id!r}",
        )
        events = [self.decoded(session_id, event) for event in stored]
        if not events:
            raise SessionNotFoundError(session_id)
        return events

    def last_version(self, session_id: str) -> int:
        """The version of the session's last stored event (its tombstone's, if erased:
        then SessionErasedError)."""
        stream = transcript_id(session_id)
        last = self.calls.run(
            lambda: self.recorder.select_events(stream, desc=True, limit=1),
            f"read session {session_id!r}",
        )
        if not last:
            raise SessionNotFoundError(session_id)
        if last[0].topic == Transcript.Erased.TOPIC:
            tombstone = self.decoded(session_id, last[0])
            raise SessionErasedError(session_id, tombstone.timestamp)
        return last[0].originator_version

    def readable_events(self, session_id: str) -> Iterator[Transcript.Event]:
        """The events of a session that decode (the views quarantine the others)."""
        stored = self.calls.run(
            lambda: self.recorder.select_events(transcript_id(session_id)),
            f"read session {session_id!r}",
        )
        for event in stored:
            try:
                yield self.decoded(session_id, event)
            except StorageError:
                continue

    def stored_page(
        self, session_id: str, after: int, size: int, until: int | None = None
    ) -> Sequence[StoredEvent]:
        """Up to `size` stored events of a session after version `after` (up to `until`),
        not decoded."""
        stream = transcript_id(session_id)
        return self.calls.run(
            lambda: self.recorder.select_events(stream, gt=after, lte=until, limit=size),
            f"read session {session_id!r}",
        )

    def session_ids(self) -> Iterator[str]:
        position: int | None = None
        while True:
            page = self.calls.run(partial(self._first_events, position), "read the log")
            for notification in page:
                try:
                    started = self.mapper.to_domain_event(notification)
                except Exception:  # a corrupt Started event: the views quarantined it
                    continue
                session_id = getattr(started, "session_id", None)
                if isinstance(session_id, str):  # else damaged: quarantined too
                    yield session_id
            if len(page) < _SESSION_PAGE:
                return
            position = page[-1].id

    def _first_events(self, position: int | None) -> Sequence[Notification]:
        return self.recorder.select_notifications(
            position, _SESSION_PAGE, topics=_FIRST_TOPICS, inclusive_of_start=False
        )

    # -- the transaction -------------------------------------------------------------------

    def _transact(
        self,
        session_id: str,
        command: Command[T],
        *,
        lenient: bool = False,
        resumable: bool = False,
    ) -> T:
        """Run `command` in a write transaction; `lenient`: on the transcript as far as its
        events can be read (else an unreadable event is a StorageError naming it);
        `resumable`: on a resumed transcript if need be (else on the whole one)."""
        aggregate_id = transcript_id(session_id)
        first_try = True

        def attempt() -> T:
            nonlocal first_try
            resume, first_try = resumable and first_try, False
            return self._attempt(session_id, aggregate_id, command, lenient, resume)

        with self._locks[hash(aggregate_id) % _LOCK_STRIPES]:
            return self.calls.run(attempt, f"write session {session_id!r}")

    def _attempt(
        self,
        session_id: str,
        aggregate_id: UUID,
        command: Command[T],
        lenient: bool,
        resumable: bool,
    ) -> T:
        """`resumable`: a resumed transcript will do. Never on a retry: an earlier try may
        have stored the ids the call made up, which a resumed transcript takes to be new
        (see `domain.resumption`)."""
        transcript = self._cached(aggregate_id)
        if transcript is None or not (transcript.complete or resumable):
            transcript = self._loaded(session_id, aggregate_id, lenient, resume=resumable)
        recalled = False
        while True:  # a resumed transcript may ask for ids once, then to be replayed
            try:
                return self._run(session_id, aggregate_id, transcript, command, lenient)
            except IncompleteTranscript as incomplete:
                assert transcript is not None and self.views is not None
                ids = incomplete.message_ids
                if ids is not None and not recalled:
                    stored = self.views.stored_messages(session_id, ids, transcript.resumed_at)
                    if stored is not None:  # else the views no longer hold the session whole
                        transcript.recall(ids, stored)
                        recalled = True
                        continue
                transcript = self._replay(session_id, aggregate_id, lenient)

    def _run(
        self,
        session_id: str,
        aggregate_id: UUID,
        transcript: Transcript | None,
        command: Command[T],
        lenient: bool,
    ) -> T:
        ran = False
        try:
            with self.backend.writing(self) as tx:
                current = self._fast_forward(session_id, transcript, tx, lenient)
                ran = True
                result, changed = command(current, tx)
                if self.views is not None:
                    self.views.project_written(tx)
        except BaseException:
            if ran:  # the command may have changed the cached transcript
                self._evict(aggregate_id)
            raise
        if changed is not None and self.repository.cache is not None:
            self.repository.cache.put(aggregate_id, changed)
        return result

    def _loaded(
        self, session_id: str, aggregate_id: UUID, lenient: bool, *, resume: bool
    ) -> Transcript | None:
        """The session's transcript, not in memory: if `resume`, resumed at its last version
        from its first event, when the views hold every event of it up to there and can
        answer for its messages; replayed whole otherwise (and always when `lenient`)."""
        if lenient or not resume or self.views is None:
            return self._replay(session_id, aggregate_id, lenient)
        last = self.recorder.select_events(aggregate_id, desc=True, limit=1)
        if not last:
            return None
        version = last[0].originator_version
        if not self.views.resumable(session_id, version):
            return self._replay(session_id, aggregate_id, lenient)
        first = self.recorder.select_events(aggregate_id, limit=1)
        transcript = self._apply(session_id, None, first)
        if transcript is not None and transcript.version < version:
            transcript.resume(version)
        return transcript

    def _replay(self, session_id: str, aggregate_id: UUID, lenient: bool) -> Transcript | None:
        return self._apply(session_id, None, self._replayed(aggregate_id), lenient)

    def _replayed(self, aggregate_id: UUID) -> Iterator[StoredEvent]:
        """The stream's events, read a page at a time: a long stream is never held whole."""
        after: int | None = None
        while True:
            page = self.recorder.select_events(aggregate_id, gt=after, limit=_REPLAY_PAGE)
            yield from page
            if len(page) < _REPLAY_PAGE:
                return
            after = page[-1].originator_version

    def _insert(self, tx: LogTransaction, transcript: Transcript) -> None:
        events = transcript.collect_events()
        if events:
            tx.insert([self.mapper.to_stored_event(event) for event in events])

    def _fast_forward(
        self, session_id: str, transcript: Transcript | None, tx: LogTransaction, lenient: bool
    ) -> Transcript | None:
        """The transcript with the events stored after its version applied (under the lock);
        replayed whole if they do not follow on (an erasure deleted the versions between)."""
        version = 0 if transcript is None else transcript.version
        stored = tx.events(transcript_id(session_id), after=version)
        if stored and stored[0].originator_version != version + 1:
            transcript, stored = None, tx.events(transcript_id(session_id), after=0)
        return self._apply(session_id, transcript, stored, lenient)

    def _apply(
        self,
        session_id: str,
        transcript: Transcript | None,
        stored: Iterable[StoredEvent],
        lenient: bool = False,
    ) -> Transcript | None:
        """`transcript` (None: none yet) with the stored events applied in order. `lenient`:
        an event that cannot be read is left out (the transcript still takes the stream's
        last version, so that its next event follows on)."""
        last = 0
        for event in stored:
            last = event.originator_version
            try:
                decoded = self.decoded(session_id, event)
                if transcript is None and not isinstance(decoded, _FIRST_EVENTS):
                    raise corrupt_event(session_id, last, ValueError("no Started event before it"))
                try:
                    transcript = decoded.mutate(transcript)
                except UNREADABLE as error:  # a damaged event, decoded but not applicable
                    raise corrupt_event(session_id, last, error) from error
            except StorageError:
                if not lenient or (transcript is None and event.topic == Transcript.Erased.TOPIC):
                    raise  # (an erased session's tombstone: nothing more to erase)
                if transcript is None:  # not even its start can be read
                    transcript = Transcript.stand_in(session_id)
                transcript.version = last  # the next event follows on
        return transcript

    def decoded(self, session_id: str, stored: StoredEvent) -> Transcript.Event:
        """A stored event of the session, decoded; StorageError naming its version if not."""
        try:
            return with_every_field(self.mapper.to_domain_event(stored))  # type: ignore[arg-type]
        except UNREADABLE as error:
            raise corrupt_event(session_id, stored.originator_version, error) from error

    def _cached(self, aggregate_id: UUID) -> Transcript | None:
        cache = self.repository.cache
        if cache is None:
            return None
        try:
            return cache.get(aggregate_id)  # type: ignore[no-any-return]
        except KeyError:
            return None

    def _evict(self, aggregate_id: UUID) -> None:
        cache = self.repository.cache
        if cache is not None:
            try:
                cache.get(aggregate_id, evict=True)
            except KeyError:
                pass
