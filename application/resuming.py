"""Bringing a session's transcript up to date inside a write transaction, with the write
side's index of message ids (`domain.id_index`): resumed from the index, fast-forwarded
with the events stored since, the ids its command is given recalled from the index, and
its events stored with what they and the fast-forward do to the index (see `event_log`).

The index is checked against the log as it is read: the version it reflects must be a
stored event of the stream, else the transcript is replayed; a transcript replayed whole
gives the index whole where it lacked the stream or disagreed with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar
from uuid import UUID

from ..domain.id_index import IndexChanges
from ..domain.resumption import IncompleteTranscript
from ..domain.transcript import Transcript
from ..projections.views import TranscriptViews
from .decoding import corrupt_event
from .log_reads import LogReads
from .storage import LogTransaction

T = TypeVar("T")
Command = Callable[[Transcript | None], tuple[T, Transcript | None]]
_UNKNOWN_TOPIC = "a topic this release of transcript-store does not store"


def forward_from(transcript: Transcript | None) -> int | None:
    """The version after which the stored events bring `transcript` up to date: a resumed
    one reads the event it stands for too (None: no transcript yet)."""
    if transcript is None:
        return None
    return transcript.version if transcript.complete else transcript.version - 1


class UnknownTopic(ValueError):
    """An event of a topic this release does not store."""


class Resuming(LogReads):
    """The write side's transcripts inside its transactions (a base class of
    `TranscriptLog`)."""

    views: TranscriptViews | None = None

    @staticmethod
    def _check_topics(session_id: str, unknown_topic: int | None) -> None:
        """StorageError naming the session's first event of a topic this release does not
        store (`unknown_topic`: its version, if it holds one)."""
        if unknown_topic is not None:
            raise corrupt_event(session_id, unknown_topic, UnknownTopic(_UNKNOWN_TOPIC))

    def _vetted(
        self, stream: UUID, transcript: Transcript | None, tx: LogTransaction, replayed: bool
    ) -> Transcript | None:
        """The transcript, if it read every event of the session the views quarantined
        (intact); else IncompleteTranscript: the session is replayed, which refuses it if one
        of them cannot be read (the views point at an event; the log decides)."""
        left_out = frozenset(self.views.left_out(tx, stream.hex) if self.views else ())
        if not left_out or (transcript is not None and left_out <= transcript.vetted):
            return transcript
        if not replayed:
            raise IncompleteTranscript()
        if transcript is not None:
            transcript.vetted = left_out
        return transcript

    def _resumed(
        self, session_id: str, aggregate_id: UUID, tx: LogTransaction, indexed: int | None
    ) -> Transcript | None:
        """The session's transcript resumed from its first event at the version the index
        reflects (None: no such session); IncompleteTranscript if the index never held the
        stream: it must be replayed."""
        first = tx.first_event(aggregate_id)
        if first is None:
            return None
        transcript = self.applied(session_id, None, [first])
        assert transcript is not None
        if transcript.erasure is not None:  # a tombstone: all there is
            return transcript
        if indexed is None:
            raise IncompleteTranscript()
        transcript.resume(indexed)
        return transcript

    def _fast_forward(
        self,
        session_id: str,
        aggregate_id: UUID,
        transcript: Transcript | None,
        tx: LogTransaction,
        lenient: bool,
        indexed: int | None,
    ) -> tuple[Transcript | None, IndexChanges]:
        """The transcript with the events stored after its version applied (under the lock),
        replayed whole if they do not follow on (an erasure deleted the versions between);
        and what the index lacks of them."""
        version = 0 if transcript is None else transcript.version
        partial = transcript is not None and not transcript.complete
        stored = tx.events(aggregate_id, after=forward_from(transcript) or 0)
        if partial:  # the version it stands for must be stored
            if not stored or stored[0].originator_version != version:
                raise IncompleteTranscript()
            stored = stored[1:]
        if stored and stored[0].originator_version != version + 1:
            if partial:
                raise IncompleteTranscript()
            transcript, version, stored = None, 0, tx.events(aggregate_id, after=0)
        forwarded: list[Transcript.Event] = []
        current = self.applied(session_id, transcript, stored, lenient, forwarded)
        if current is None:  # a stream to start (its index, if any, is a leftover)
            return None, IndexChanges(replace=True)
        if indexed is not None and version <= indexed <= current.version:
            return current, IndexChanges(indexed).apply(
                event for event in forwarded if event.originator_version > indexed
            )
        if partial:
            raise IncompleteTranscript()
        return current, IndexChanges.whole(current)

    @staticmethod
    def _decided(
        command: Command[T], transcript: Transcript | None, tx: LogTransaction, stream: UUID
    ) -> tuple[T, Transcript | None]:
        """The command's decision, the ids a resumed transcript asks for read from the
        index."""
        while True:
            try:
                return command(transcript)
            except IncompleteTranscript as incomplete:
                if transcript is None or incomplete.message_ids is None:
                    raise
                ids = incomplete.message_ids
                transcript.recall(ids, tx.indexed(stream, ids))

    def _store(
        self,
        tx: LogTransaction,
        stream: UUID,
        events: list[Transcript.Event],
        changes: IndexChanges,
        indexed: int | None,
    ) -> None:
        """Insert the events, what they do to the index, and what it lacked."""
        if events:
            tx.insert([self.mapper.to_stored_event(event) for event in events])
            if isinstance(events[-1], Transcript.Erased):  # a tombstone replaces the stream
                tx.delete_before(stream, events[-1].originator_version)
            changes.apply(events)
        if changes.entries or changes.replace or changes.version != indexed:
            tx.write_index(stream, changes)
