"""The write side: the event-sourcing application that stores Transcript aggregates.

A command runs in one transaction that holds the store's write lock from its start
(`Backend.writing`): the session's transcript — kept in memory between calls, else resumed
from the write side's index of message ids (`domain.id_index`), else replayed whole before
the lock — is brought up to date with the events stored since (fast-forward, under the lock),
the command decides, its events are inserted with what they do to the index, and projected
into the views (`views`, when set): one commit makes all three. Under the lock no other
writer can store a version in between, so a write never loses a race, and writers take the
lock in turn. A failure that waiting cures (the lock not obtained in time, a dropped
connection) is retried until the lock timeout: safe, because the command is run again on the
transcript as stored, and a command is idempotent (its new message ids are chosen before the
first attempt).

The log alone decides what a write stores. The index is kept in the log's own transactions
and checked against the log as it is read: a transcript resumed from it stands for the
stream at the version it reflects (that event must be stored), and learns the ids its
command is given from it, in the same transaction (`IncompleteTranscript` → `recall`). Any
other command replays the stream. The index catches up, in the next write of their session,
with events that writers not keeping it stored (an older release, the event-sourcing library
alone); a stream it never held is replayed once and indexed whole. No view is asked what is
stored: a lost, altered or stale view row can make a write slower (a replay), never change
what it stores. Every write refuses a session holding an event that cannot be read
(`StorageError` naming its version): of a topic this release does not store (an index of
the log finds it), or damaged — where the views quarantined an event of the session, a
transcript that did not read it is replayed first, which fails on it.

A write that answers with the session's context (`write_in_context`) reads it before its
commit (see `context`), so that a write that committed never fails to answer.

`erase` is the one write that removes events: it inserts the session's tombstone and
deletes every earlier event of the stream, in the same transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import Environment, EnvType

from ..domain.errors import SessionNotFoundError, StorageError, TranscriptError
from ..domain.resumption import IncompleteTranscript
from ..domain.transcript import Transcript, transcript_id
from ..projections.views import TranscriptViews
from .context import Context
from .decoding import UNREADABLE
from .resuming import Command, Resuming, forward_from
from .retry import StorageCalls
from .storage import LogTransaction, StoreConfig

T = TypeVar("T")

_LOCK_STRIPES = 64
# Recently written transcripts stay in memory (about 150 bytes a message: ids, content
# hashes), so that a gateway writing thousands of live sessions in turn replays none of
# them; a failed save evicts its transcript.
CACHED_SESSIONS = 4096
_CACHE = {
    "AGGREGATE_CACHE_MAXSIZE": str(CACHED_SESSIONS),
    "AGGREGATE_CACHE_FASTFORWARD": "n",
    "DEEPCOPY_FROM_AGGREGATE_CACHE": "n",
}


@dataclass(frozen=True)
class Written(Generic[T]):
    """What a write transaction decided, and the session's context once it is stored (if
    asked for, and the views could give it)."""

    result: T
    context: Context | None = None


class TranscriptLog(Resuming):
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

        def start(transcript: Transcript | None) -> tuple[None, Transcript]:
            if transcript is None:
                return None, Transcript.start(session_id, **arguments)
            if not transcript.started_with(**arguments):
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
        return self._transact(
            session_id, _on_started(session_id, command), resumable=appends
        ).result

    def write_in_context(
        self,
        session_id: str,
        command: Callable[[Transcript], T],
        *,
        appends: bool = False,
        messages_of: Callable[[T], Sequence[str]] | None = None,
    ) -> tuple[T, Context]:
        """`write`, and the session's context once the events are stored, knowing the
        messages of the ids `messages_of(result)` names."""
        written = self._transact(
            session_id,
            _on_started(session_id, command),
            resumable=appends,
            context=messages_of or _no_ids,
        )
        return written.result, written.context or self.context(session_id)

    def erase(self, session_id: str) -> tuple[Transcript.Erased, bool]:
        """Replace the session's stream by its tombstone; return it, and whether an earlier
        call had erased it already (then nothing is written).

        Events that cannot be read are erased too: the tombstone counts what can be read."""
        tries = 0

        def erase(transcript: Transcript) -> tuple[Transcript.Erased, bool]:
            nonlocal tries
            tries += 1
            if transcript.erasure is not None:  # on a retry: this call's first try landed
                return transcript.erasure, tries == 1
            return transcript.erase(), False

        return self._transact(session_id, _on_started(session_id, erase), lenient=True).result

    def insert_records(self, events: Sequence[StoredEvent]) -> None:
        """Insert stored events as they are (a copy of another store's log; its next write
        of each session indexes it)."""

        def insert() -> None:
            with self.backend.writing(self) as tx:
                tx.insert(events)

        self.calls.run(insert, "write the log")

    # -- the transaction -------------------------------------------------------------------

    def _transact(
        self,
        session_id: str,
        command: Command[T],
        *,
        lenient: bool = False,
        resumable: bool = False,
        context: Callable[[T], Sequence[str]] | None = None,
    ) -> Written[T]:
        """Run `command` in a write transaction; `lenient`: on the transcript as far as its
        events can be read (else an unreadable event is a StorageError naming it);
        `resumable`: on a resumed transcript if need be (else on the whole one); `context`:
        read the session's context before the commit, with the messages of the ids it names
        of the result."""
        aggregate_id = transcript_id(session_id)
        first_try = True

        def attempt() -> Written[T]:
            nonlocal first_try
            resume, first_try = resumable and first_try, False
            return self._attempt(session_id, aggregate_id, command, lenient, resume, context)

        with self._locks[hash(aggregate_id) % _LOCK_STRIPES]:
            return self.calls.run(attempt, f"write session {session_id!r}")

    def _attempt(
        self,
        session_id: str,
        aggregate_id: UUID,
        command: Command[T],
        lenient: bool,
        resumable: bool,
        context: Callable[[T], Sequence[str]] | None,
    ) -> Written[T]:
        """`resumable`: a resumed transcript will do. Never on a retry: an earlier try may
        have stored the ids the call made up, which a resumed transcript takes to be new
        (see `domain.resumption`)."""
        transcript = self._cached(aggregate_id)
        if transcript is not None and not (transcript.complete or resumable):
            transcript = None
        replayed = transcript is None and not resumable
        if replayed:
            transcript = self.replay(session_id, lenient)
        while True:
            try:
                return self._run(
                    session_id, aggregate_id, transcript, command, lenient, resumable, context,
                    replayed=replayed,
                )  # fmt: skip
            except IncompleteTranscript:  # the index or the views cannot answer: the log will
                transcript, resumable, replayed = self.replay(session_id, lenient), False, True

    def _run(
        self,
        session_id: str,
        aggregate_id: UUID,
        transcript: Transcript | None,
        command: Command[T],
        lenient: bool,
        resume: bool,
        context: Callable[[T], Sequence[str]] | None,
        *,
        replayed: bool,
    ) -> Written[T]:
        """`replayed`: `transcript` was replayed from the log for this attempt."""
        ran = False
        try:
            with self.backend.writing(self, aggregate_id) as tx:
                tx.read_ahead(aggregate_id, after=forward_from(transcript))
                if self.views is not None:
                    self.views.read_ahead(tx, aggregate_id.hex)
                indexed, unknown_topic = tx.index_state(aggregate_id)
                if not lenient:
                    self._check_topics(session_id, unknown_topic)
                    transcript = self._vetted(aggregate_id, transcript, tx, replayed)
                if transcript is None and resume:
                    transcript = self._resumed(session_id, aggregate_id, tx, indexed)
                current, changes = self._fast_forward(
                    session_id, aggregate_id, transcript, tx, lenient, indexed
                )
                ran = True
                result, changed = self._decided(command, current, tx, aggregate_id)
                events = changed.collect_events() if changed is not None else []
                self._store(tx, aggregate_id, events, changes, indexed)
                if self.views is not None:
                    self.views.project_written(tx, events)
                seen = (
                    self._context(session_id, aggregate_id, tx, events, context(result))
                    if context is not None
                    else None
                )
        except BaseException:
            if ran:  # the command may have changed the cached transcript
                self._evict(aggregate_id)
            raise
        if changed is not None and self.repository.cache is not None:
            self.repository.cache.put(aggregate_id, changed)
        return Written(result, seen)

    def _context(
        self,
        session_id: str,
        aggregate_id: UUID,
        tx: LogTransaction,
        events: Sequence[Transcript.Event],
        message_ids: Sequence[str],
    ) -> Context | None:
        """The session's context now that `events` are stored (and projected, if the views
        could be), knowing the messages of `message_ids`: the views' as they are, with the
        log's events after it applied; None if the views cannot give it. Read once the
        views hold the write: a compaction's context is then its few rows, not the many it
        replaced."""
        views = self.views
        viewed = views.context_in(tx, session_id, message_ids) if views is not None else None
        if viewed is None:
            return None
        context = Context(*viewed)
        head = events[-1].originator_version if events else None
        try:
            if head is None or context.version < head:  # the views are behind the log
                for stored in tx.events(aggregate_id, after=context.version):
                    context.apply(self.decoded(session_id, stored))
        except (StorageError, *UNREADABLE):  # the log will say, after the commit
            return None
        return context if context.knows([*context.active_ids, *message_ids]) else None

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


def _no_ids(_: object) -> Sequence[str]:
    return ()


def _on_started(
    session_id: str, command: Callable[[Transcript], T]
) -> Callable[[Transcript | None], tuple[T, Transcript]]:
    """`command` on the session's transcript; SessionNotFoundError if there is none."""

    def run(transcript: Transcript | None) -> tuple[T, Transcript]:
        if transcript is None:
            raise SessionNotFoundError(session_id)
        return command(transcript), transcript

    return run
