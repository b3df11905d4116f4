"""The Transcript aggregate: one append-only event stream per agent session.

Its state stays small whatever the length of the history: the active id list, a content
hash per message id ever stored, and the tool-call facts of the active messages. Message
contents live only in the events (and in the read models projected from them).

Stored topics are explicit (`transcripts:Transcript.<Event>`), so renaming code never
breaks stored data. Command methods check every invariant; `apply` bodies only mutate
state, because they run again on every replay.

A transcript can also be resumed from its start alone (see `domain.resumption`).

A committed compaction or a rewind moves the fence: an attempt begun before it cannot commit,
so a commit names what it supersedes by a count (`domain.committed`). A rewound message
stays stored, and `append` restores it (see `domain.rewind`). Beside its messages a session
keeps a state, a JSON object of the caller's (`domain.state`).

`Erased` is the tombstone `forget` leaves: the store deletes every earlier event of the
stream in the transaction that inserts it, so it replays as the stream's first and only
event, into a transcript that refuses every command (`SessionErasedError`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from .appending import LeanAppends
from .attempted import upcast_v1_v2 as failed_v1_v2
from .committed import superseded_ids, upcast_v1_v2, upcast_v2_v3
from .compaction import (
    CONFLICT,
    CompactionPlan,
    CompactionRejected,
    ToolPairing,
    check_result_pairing,
    plan_compaction,
    would_supersede,
)
from .errors import MessageConflictError, SessionErasedError, TranscriptError
from .messages import Message, content_hash, new_message_id, safe_text, split_id, with_id
from .resumption import Resumable
from .rewind import Rewinding
from .sessions import check_start
from .state import SessionState


@lru_cache(maxsize=4096)
def transcript_id(session_id: str) -> UUID:
    """The aggregate id of a session: stable, derived from the session id string."""
    return uuid5(NAMESPACE_URL, f"/transcripts/{session_id}")


class Transcript(Resumable, ToolPairing, Rewinding, SessionState, LeanAppends, Aggregate):
    TOPIC = "transcripts:Transcript"

    class Event(Aggregate.Event):
        TOPIC = "transcripts:Transcript.Event"

    class Started(Event, Aggregate.Created):
        TOPIC = "transcripts:Transcript.Started"
        session_id: str
        source: str
        model: str | None
        parent_id: str | None
        metadata: dict[str, Any]

    class MessageAppended(Event):
        TOPIC = "transcripts:Transcript.MessageAppended"
        message_id: str
        message: dict[str, Any]
        content_hash: str

        def apply(self, transcript: Transcript) -> None:
            transcript.hashes[self.message_id] = self.content_hash
            transcript.active.append(self.message_id)
            transcript.note_pairing(self.message_id, self.message)
            transcript.rewound.discard(self.message_id)  # a restore

    class CompactionCommitted(Event):
        TOPIC = "transcripts:Transcript.CompactionCommitted"  # see domain.committed
        class_version = 3  # 1 listed the superseded ids; 2 had no metadata: upcast when read
        upcast_v1_v2 = staticmethod(upcast_v1_v2)
        upcast_v2_v3 = staticmethod(upcast_v2_v3)
        compaction_id: str
        based_on_version: int
        replaced: int  # the first active messages it replaces: superseded, or kept
        kept: list[str]
        added: list[dict[str, Any]]  # {"id", "message", "content_hash"} per new message
        order: list[str]  # the replacement's ids, in order
        reason: str
        tokens_before: int | None
        tokens_after: int | None
        metadata: dict[str, Any] | None  # the caller's, about the compaction (its handler)

        def apply(self, transcript: Transcript) -> None:
            for new in self.added:
                transcript.hashes[new["id"]] = new["content_hash"]
                transcript.note_pairing(new["id"], new["message"])
            if transcript.complete:  # a resumed one has no active list to cut
                superseded = superseded_ids(transcript.active, self.replaced, self.kept)
                transcript.active = [*self.order, *transcript.active[self.replaced :]]
                transcript.forget_pairing(superseded)
            transcript.fence_version = self.originator_version
            transcript.compaction_ids.add(self.compaction_id)
            transcript.committed_ids.add(self.compaction_id)

    class CompactionFailed(Event):
        TOPIC = "transcripts:Transcript.CompactionFailed"  # see domain.attempted
        class_version = 2  # 1 kept neither what was proposed nor the exception: upcast
        upcast_v1_v2 = staticmethod(failed_v1_v2)
        compaction_id: str
        based_on_version: int
        failure: str
        error: str
        reason: str
        would_supersede: list[str]
        tokens_before: int | None
        tokens_after: int | None
        proposed: list[dict[str, Any]] | None  # the new messages of a refused replacement
        exception: dict[str, str] | None  # the summarizer's: type, message, traceback

        def apply(self, transcript: Transcript) -> None:
            transcript.compaction_ids.add(self.compaction_id)

    class Rewound(Event):
        """Active messages taken out of the context; they stay stored, marked rewound."""

        TOPIC = "transcripts:Transcript.Rewound"
        message_ids: list[str]  # in their active order
        reason: str

        def apply(self, transcript: Transcript) -> None:
            gone = set(self.message_ids)
            transcript.active = [i for i in transcript.active if i not in gone]
            transcript.forget_pairing(gone)
            transcript.rewound |= gone
            transcript.fence_version = self.originator_version

    class StateChanged(Event):
        """Keys of the session's state set (`values`) or removed: see `domain.state`."""

        TOPIC = "transcripts:Transcript.StateChanged"
        values: dict[str, Any]
        removed: list[str]

        def apply(self, transcript: Transcript) -> None:
            transcript.apply_state_change(self.values, self.removed)

    class Erased(Event):
        """The tombstone of a forgotten session: that it existed, when, and how much it held."""

        TOPIC = "transcripts:Transcript.Erased"
        session_id: str
        source: str
        model: str | None
        started_at: datetime
        messages: int  # stored, superseded ones included
        compactions_committed: int
        compactions_failed: int

        def mutate(self, aggregate: Transcript | None) -> Transcript | None:
            if aggregate is None:  # replayed: the stream's first and only event
                aggregate = Transcript.__new__(Transcript)
                aggregate.__base_init__(
                    self.originator_id, self.originator_version - 1, self.started_at
                )
                aggregate.__init__(self.session_id, self.source, self.model, None, {})  # type: ignore[misc]
            return super().mutate(aggregate)

        def apply(self, transcript: Transcript) -> None:
            transcript.parent_id = None
            transcript.metadata = {}
            transcript.state = {}
            transcript.active = []
            transcript.hashes = {}
            transcript.calls = {}
            transcript.answers = {}
            transcript.compaction_ids = set()
            transcript.committed_ids = set()
            transcript.rewound = set()
            transcript.erasure = self
            transcript.complete = True  # an erased transcript holds nothing more

    def __init__(
        self,
        session_id: str,
        source: str,
        model: str | None,
        parent_id: str | None,
        metadata: dict[str, Any],
    ) -> None:
        self.session_id = session_id
        self.source = source
        self.model = model
        self.parent_id = parent_id
        self.metadata = metadata
        self.state: dict[str, Any] = {}
        self.active: list[str] = []
        self.hashes: dict[str, str] = {}
        self.calls: dict[str, str] = {}  # tool call id -> active assistant message making it
        self.answers: dict[str, str] = {}  # active tool message id -> call id it answers
        self.rewound: set[str] = set()  # stored, out of the context, not superseded
        self.fence_version = 0  # of the last commit or rewind: no attempt begun before commits
        self.compaction_ids: set[str] = set()  # settled: committed or failed
        self.committed_ids: set[str] = set()
        self.erasure: Transcript.Erased | None = None

    # -- commands ------------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        session_id: str,
        *,
        source: str,
        model: str | None,
        parent_id: str | None,
        metadata: Mapping[str, Any],
    ) -> Transcript:
        metadata = check_start(session_id, source, model, parent_id, metadata)
        return cls._create(
            cls.Started,
            id=transcript_id(session_id),
            session_id=session_id,
            source=source,
            model=model,
            parent_id=parent_id,
            metadata=metadata,
        )

    @classmethod
    def stand_in(cls, session_id: str) -> Transcript:
        """A transcript for a session whose Started event cannot be read (to erase it). Its
        id is not checked: an older release may have stored one that today's rules refuse."""
        transcript = cls._create(
            cls.Started, id=transcript_id(session_id), session_id=session_id,
            source="unknown", model=None, parent_id=None, metadata={},
        )  # fmt: skip
        transcript.collect_events()  # it is not stored: only its state is used
        return transcript

    def started_with(
        self,
        *,
        source: str,
        model: str | None,
        parent_id: str | None,
        metadata: Mapping[str, Any],
    ) -> bool:
        self._check_not_erased()
        given = (source, model, parent_id, dict(metadata))
        return (self.source, self.model, self.parent_id, self.metadata) == given

    def append(
        self,
        messages: Sequence[object],
        fresh_ids: Sequence[str] | None = None,
        *,
        restore: bool = True,
    ) -> list[Message]:
        """Store the messages not stored yet; return every given message as stored.

        A message without an id gets `fresh_ids[i]` (i: its place), else a new id: a caller
        retrying a call gives the same ids, so it stores the same messages. A stored id with
        identical content is a no-op — but a rewound one is restored, at the end of the
        context, when `restore`; with other content the whole call is refused with
        MessageConflictError before anything is triggered.
        """
        self._check_not_erased()
        items = [split_id(message) for message in messages]
        self._check_known(message_id for message_id, _ in items if message_id is not None)
        planned: dict[str, str] = {}
        for message_id, content in items:
            if message_id is None:
                continue
            digest = content_hash(content)
            known = self.hashes.get(message_id, planned.get(message_id))
            if known is not None and known != digest:
                raise MessageConflictError(self.session_id, message_id)
            planned[message_id] = digest
        stored: list[Message] = []
        new: dict[str, tuple[Message, str | None]] = {}  # (an id given twice: stored once)
        for index, (given_id, content) in enumerate(items):
            message_id = given_id or (fresh_ids[index] if fresh_ids else new_message_id())
            if message_id not in new and (
                message_id not in self.hashes or (restore and message_id in self.rewound)
            ):
                new[message_id] = (content, planned.get(message_id))
            stored.append(with_id(message_id, content))
        self._trigger_appended(new)
        return stored

    def commit_compaction(
        self,
        *,
        compaction_id: str,
        based_on_version: int,
        snapshot: Sequence[str],
        replacement: object,
        reason: str,
        tokens_before: int | None,
        tokens_after: int | None,
        metadata: dict[str, Any] | None = None,
    ) -> CompactionPlan:
        """Commit a replacement of the snapshot, or raise CompactionRejected."""
        self._check_not_erased()
        self._check_complete()
        self._check_unsettled(compaction_id)
        if self.fence_version > based_on_version:
            raise CompactionRejected(
                CONFLICT,
                f"another compaction committed or a rewind at version {self.fence_version}, "
                f"after this attempt began at version {based_on_version}",
                would_supersede(snapshot, replacement),
            )
        if list(snapshot) != self.active[: len(snapshot)]:  # read from damaged views
            text = f"the attempt's snapshot is not the active list of version {based_on_version}"
            raise CompactionRejected(CONFLICT, text, would_supersede(snapshot, replacement))
        plan = plan_compaction(snapshot, replacement, self.hashes)
        check_result_pairing(plan, self.active[len(snapshot) :], self.calls, self.answers)
        self.trigger_event(
            self.CompactionCommitted,
            compaction_id=compaction_id,
            based_on_version=based_on_version,
            replaced=len(snapshot),
            kept=plan.kept,
            added=[new.stored() for new in plan.added],
            order=plan.order,
            reason=safe_text(reason),
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            metadata=metadata,
        )
        return plan

    def fail_compaction(
        self, *, compaction_id: str, based_on_version: int, failure: str, error: str,
        reason: str, would_supersede: Sequence[str], tokens_before: int | None = None,
        tokens_after: int | None = None, proposed: list[dict[str, Any]] | None = None,
        exception: dict[str, str] | None = None,
    ) -> None:  # fmt: skip
        """Record a failed attempt (what was `proposed`, the `exception` raised); it changes
        nothing else."""
        self._check_not_erased()
        self._check_complete()
        self._check_unsettled(compaction_id)
        self.trigger_event(
            self.CompactionFailed, compaction_id=compaction_id,
            based_on_version=based_on_version, failure=failure, error=safe_text(error),
            reason=safe_text(reason), would_supersede=list(would_supersede),
            tokens_before=tokens_before, tokens_after=tokens_after, proposed=proposed,
            exception=exception,
        )  # fmt: skip

    def erase(self) -> Transcript.Erased:
        """Trigger the tombstone (the store deletes every earlier event with it); return it.

        Erasing an erased transcript triggers nothing and returns the first tombstone.
        """
        if self.erasure is None:
            self._check_complete()
            self.trigger_event(
                self.Erased,
                session_id=self.session_id,
                source=self.source,
                model=self.model,
                started_at=self.created_on,
                messages=len(self.hashes),
                compactions_committed=len(self.committed_ids),
                compactions_failed=len(self.compaction_ids) - len(self.committed_ids),
            )
        assert self.erasure is not None
        return self.erasure

    def has_committed(self, compaction_id: str) -> bool:
        self._check_complete()
        return compaction_id in self.committed_ids

    def has_settled(self, compaction_id: str) -> bool:  # committed or recorded as failed
        self._check_complete()
        return compaction_id in self.compaction_ids

    def _check_not_erased(self) -> None:
        if self.erasure is not None:
            raise SessionErasedError(self.session_id, self.erasure.timestamp)

    def _check_unsettled(self, compaction_id: str) -> None:
        if compaction_id in self.compaction_ids:
            raise TranscriptError(f"compaction {compaction_id!r} was already committed or failed")
