"""Several changes to one session as one transaction: `TranscriptStore.write`.

A framework's save is rarely one kind of change: a turn's new messages, the compaction made
during it and the session's state (where its history ends, a token to fence writers on) must
land together, or not at all. `write` applies `Append`, `Rewind`, `Compact` and `SetState`
in order, on the transcript as stored under the write lock, and stores their events in one
transaction.

Each change is what its own call does (`append`, `rewind`, `commit_compaction`, a state
change), with what a retry must repeat decided once: the ids of new messages before the
first try, the ids a rewind takes out and a compaction's id on it. So a retry of a write
that landed finds every change made and stores nothing. A `Compact` replaces the whole
active context as it stands at its turn in the write (its snapshot): a write holding one
must be fenced with `expected_version`, so that the caller computed its replacement from
what is stored. A compaction that cannot commit (a failure of `commit_compaction`'s
contract) stores nothing of the write: TranscriptError naming the failure, not recorded as
a failed attempt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from uuid import uuid4

from ..domain.compaction import CompactionRejected
from ..domain.errors import TranscriptError, VersionConflictError
from ..domain.messages import as_message_list, new_message_ids
from ..domain.state import check_state_change
from ..domain.transcript import Transcript
from . import arguments


@dataclass(frozen=True)
class Append:
    """Store messages, as `append` does (a rewound id given again is restored)."""

    messages: Sequence[object]


@dataclass(frozen=True)
class Rewind:
    """Take the last `count` active messages, or every one after `to`, out of the context,
    as `rewind` does."""

    count: int | None = None
    to: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class Compact:
    """Replace the active context, as it stands at this change, with `replacement`: the
    compaction contract of `commit_compaction` (an item with the id of an active message
    keeps it, any other item is a new message)."""

    replacement: Sequence[object]
    reason: str = ""
    tokens_before: int | None = None
    tokens_after: int | None = None
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class SetState:
    """Set keys of the session's state to `values` and remove the keys in `remove`."""

    values: Mapping[str, Any] = field(default_factory=dict)
    remove: Sequence[str] = ()


Change = Append | Rewind | Compact | SetState


class Changes:
    """The changes of one `write`, checked, with what a retry repeats decided."""

    def __init__(self, session_id: str, changes: object, expected_version: object) -> None:
        if not arguments.is_list(changes):
            raise TranscriptError(f"changes must be a list of changes: {changes!r}")
        self.session_id = session_id
        self.expected = arguments.optional_integer(expected_version, "expected_version")
        self.steps = [self._checked(index, change) for index, change in enumerate(changes)]
        if self.expected is None and any(isinstance(c, Compact) for c, _ in self.steps):
            raise TranscriptError("a write that compacts needs an expected_version")
        self.rewound: dict[int, list[str]] = {}  # by step: decided on the first try

    @property
    def only_appends(self) -> bool:
        """Whether a transcript resumed from its start will do (see `event_log`)."""
        return all(isinstance(change, Append) for change, _ in self.steps)

    def apply(self, transcript: Transcript) -> int:
        """Make every change; VersionConflictError (nothing kept) if the transcript is not at
        the expected version and the changes store anything, or cannot be made on it. Return
        its version after."""
        version = transcript.version
        moved = self.expected is not None and version != self.expected
        try:
            for index, (change, decided) in enumerate(self.steps):
                self._apply(transcript, index, change, decided)
        except TranscriptError:
            if moved:  # made for another state of the session than this one
                raise VersionConflictError(self.session_id, self.expected, version) from None
            raise
        if moved and transcript.version != version:
            raise VersionConflictError(self.session_id, self.expected, version)
        return transcript.version

    def _apply(self, transcript: Transcript, index: int, change: Change, decided: Any) -> None:
        if isinstance(change, Append):
            transcript.append(change.messages, decided)
        elif isinstance(change, Rewind):
            if index not in self.rewound:
                self.rewound[index] = transcript.rewind_target(count=change.count, to=change.to)
            transcript.rewind(self.rewound[index], reason=change.reason)
        elif isinstance(change, Compact):
            _compact(transcript, index, change, compaction_id=decided)
        else:
            transcript.change_state(*decided)

    @staticmethod
    def _checked(index: int, change: object) -> tuple[Change, Any]:
        """The change, and what its application needs decided once."""
        if isinstance(change, Append):
            messages = as_message_list(change.messages)
            return Append(messages), new_message_ids(len(messages))
        if isinstance(change, Rewind):
            arguments.rewind_target(change.count, change.to)
            arguments.text(change.reason, "reason")
            return change, None
        if isinstance(change, Compact):
            if not arguments.is_list(change.replacement):
                raise TranscriptError(f"change {index}: a replacement is a list of messages")
            arguments.text(change.reason, "reason")
            for count in (change.tokens_before, change.tokens_after):
                arguments.optional_integer(count, "a token count")
            metadata = arguments.optional_json_object(change.metadata, "metadata")
            return replace(change, metadata=metadata), f"cmp_{uuid4().hex}"
        if isinstance(change, SetState):
            return change, check_state_change(change.values, change.remove)
        raise TranscriptError(
            f"change {index} is not an Append, Rewind, Compact or SetState: {change!r}"
        )


def _compact(transcript: Transcript, index: int, change: Compact, *, compaction_id: str) -> None:
    """Commit the compaction on the active context as it stands (once: a retry finds it)."""
    if compaction_id in transcript.compaction_ids:
        return
    try:
        transcript.commit_compaction(
            compaction_id=compaction_id,
            based_on_version=transcript.version,
            snapshot=list(transcript.active),
            replacement=list(change.replacement),
            reason=change.reason,
            tokens_before=change.tokens_before,
            tokens_after=change.tokens_after,
            metadata=change.metadata,
        )
    except CompactionRejected as rejected:
        raise TranscriptError(
            f"change {index} cannot commit ({rejected.failure}): {rejected.error}"
        ) from None
