"""Reading the log of the write side: a session's events (decoded, or as stored), its
version, the sessions it holds, and a stream replayed into its transcript.

A stored event that cannot be read is a `StorageError` naming its session and version; a
replay that is `lenient` leaves it out instead (to erase a damaged session).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.persistence import Notification, StoredEvent

from ..domain.errors import SessionErasedError, SessionNotFoundError, StorageError
from ..domain.transcript import Transcript, transcript_id
from .context import Context
from .decoding import UNREADABLE, corrupt_event, with_every_field
from .retry import StorageCalls

_SESSION_PAGE = 500
_REPLAY_PAGE = 10_000  # events read at a time when a transcript is replayed
_READ_PAGE = 250  # events read at a time when they are decoded as they are read (verify)
FIRST_EVENTS = (Transcript.Started, Transcript.Erased)  # a stream begins with one
_FIRST_TOPICS = [event.TOPIC for event in FIRST_EVENTS]


class LogReads(Application[UUID]):
    """The reads of the write side's application (a base class of `TranscriptLog`)."""

    calls: StorageCalls

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

    def context(self, session_id: str) -> Context:
        """The session's active context, from its whole log (a page at a time)."""
        stream = transcript_id(session_id)

        def read() -> Context:
            context = Context()
            for stored in self._replayed(stream):
                try:
                    context.apply(self.decoded(session_id, stored))
                except UNREADABLE as error:  # decoded, but damaged
                    raise corrupt_event(session_id, stored.originator_version, error) from error
            return context

        return self.calls.run(read, f"read session {session_id!r}")

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

    def readable_pages(self, session_id: str) -> Iterator[list[Transcript.Event | None]]:
        """The events of a session, decoded, a page at a time (a long stream is never held
        whole); None in place of one that does not decode (the views quarantine it)."""
        after = 0
        while True:
            page = self.stored_page(session_id, after, _READ_PAGE)
            yield [self._readable(session_id, stored) for stored in page]
            if len(page) < _READ_PAGE:
                return
            after = page[-1].originator_version

    def _readable(self, session_id: str, stored: StoredEvent) -> Transcript.Event | None:
        try:
            return self.decoded(session_id, stored)
        except StorageError:
            return None

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

    def decoded(self, session_id: str, stored: StoredEvent) -> Transcript.Event:
        """A stored event of the session, decoded; StorageError naming its version if not."""
        try:
            return with_every_field(self.mapper.to_domain_event(stored))  # type: ignore[arg-type]
        except UNREADABLE as error:
            raise corrupt_event(session_id, stored.originator_version, error) from error

    # -- replaying -------------------------------------------------------------------------

    def replay(self, session_id: str, lenient: bool = False) -> Transcript | None:
        """The session's transcript from its whole stream (None: no such session)."""
        return self.applied(session_id, None, self._replayed(transcript_id(session_id)), lenient)

    def applied(
        self,
        session_id: str,
        transcript: Transcript | None,
        stored: Iterable[StoredEvent],
        lenient: bool = False,
        seen: list[Transcript.Event] | None = None,
    ) -> Transcript | None:
        """`transcript` (None: none yet) with the stored events applied in order, each added
        to `seen` if given. `lenient`: an event that cannot be read is left out (the
        transcript still takes the stream's last version, so that its next event follows
        on)."""
        last = 0
        for event in stored:
            last = event.originator_version
            try:
                decoded = self.decoded(session_id, event)
                if seen is not None:
                    seen.append(decoded)
                if transcript is None and not isinstance(decoded, FIRST_EVENTS):
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

    def _replayed(self, aggregate_id: UUID) -> Iterator[StoredEvent]:
        """The stream's events, read a page at a time: a long stream is never held whole."""
        after: int | None = None
        while True:
            page = self.recorder.select_events(aggregate_id, gt=after, limit=_REPLAY_PAGE)
            yield from page
            if len(page) < _REPLAY_PAGE:
                return
            after = page[-1].originator_version

    def _first_events(self, position: int | None) -> Sequence[Notification]:
        return self.recorder.select_notifications(
            position, _SESSION_PAGE, topics=_FIRST_TOPICS, inclusive_of_start=False
        )
