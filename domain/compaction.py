"""The compaction contract: which replacements are valid and what they do.

A compaction is planned against the active snapshot an attempt saw. Replacement items that
carry the id of a snapshot message keep it (unchanged); items without an id are new messages,
and so are items carrying an id the session never stored (stored under that id, as `append`
stores one: an importer keeps a summary's own id); anything else — an id the session stored
outside the snapshot, say — is rejected with a failure code that the audit records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import InvalidMessageError
from .messages import Message, call_answered, calls_made, content_hash, new_message_id, split_id

CONFLICT = "conflict"
INVALID_REPLACEMENT = "invalid_replacement"
ORPHANED_TOOL_RESULT = "orphaned_tool_result"
COUNT_TOKENS_ERROR = "count_tokens_error"  # the caller's token counter raised
SUMMARIZE_ERROR = "summarize_error"
STORAGE_ERROR = "storage_error"


class CompactionRejected(Exception):
    """A compaction that must not commit; the application records it as failed."""

    def __init__(self, failure: str, error: str, would_supersede: Sequence[str]) -> None:
        super().__init__(error)
        self.failure = failure
        self.error = error
        self.would_supersede = list(would_supersede)


@dataclass(frozen=True)
class NewMessage:
    id: str
    content: Message
    content_hash: str

    def stored(self) -> dict[str, Any]:
        """As `CompactionCommitted.added` holds it."""
        return {"id": self.id, "message": self.content, "content_hash": self.content_hash}


@dataclass(frozen=True)
class CompactionPlan:
    """What a valid replacement does to the snapshot it was computed from."""

    order: list[str]  # ids of the replacement, in the given order
    kept: list[str]
    superseded: list[str]
    added: list[NewMessage]


def plan_compaction(
    snapshot: Sequence[str], replacement: object, hashes: Mapping[str, str]
) -> CompactionPlan:
    """Check a replacement against the snapshot ids and `hashes` (the content hash of every
    message the session ever stored); raise CompactionRejected if invalid."""

    def reject(error: str) -> CompactionRejected:
        return CompactionRejected(INVALID_REPLACEMENT, error, snapshot)

    if isinstance(replacement, (str, bytes, Mapping)) or not isinstance(replacement, Sequence):
        raise reject(f"a replacement must be a list of messages, not {type(replacement).__name__}")
    in_snapshot = set(snapshot)
    order: list[str] = []
    kept: list[str] = []
    added: list[NewMessage] = []
    named: set[str] = set()  # the ids of the new messages
    for index, item in enumerate(replacement):
        try:
            message_id, content = split_id(item)
        except InvalidMessageError as error:
            raise reject(f"replacement item {index}: {error}") from None
        if message_id is None or message_id not in hashes:
            if message_id in named:
                raise reject(f"replacement item {index} repeats the new id {message_id!r}")
            new = NewMessage(message_id or new_message_id(), content, content_hash(content))
            added.append(new)
            order.append(new.id)
            named.add(new.id)
            continue
        if message_id not in in_snapshot:
            raise reject(
                f"replacement item {index} has id {message_id!r}, a message the session "
                "stored outside the snapshot (drop the id of a new message)"
            )
        if message_id in kept:
            raise reject(f"replacement keeps message {message_id!r} twice")
        if content_hash(content) != hashes[message_id]:
            raise reject(
                f"replacement item {index} keeps message {message_id!r} but changes its "
                "content (drop the id of an edited message)"
            )
        kept.append(message_id)
        order.append(message_id)
    kept_set = set(kept)
    superseded = [message_id for message_id in snapshot if message_id not in kept_set]
    return CompactionPlan(order=order, kept=kept, superseded=superseded, added=added)


def would_supersede(snapshot: Sequence[str], replacement: object) -> list[str]:
    """The snapshot ids a replacement does not keep (all of them if it is not a list)."""
    kept: set[str] = set()
    if isinstance(replacement, Sequence) and not isinstance(replacement, (str, bytes)):
        kept = {
            item["id"]
            for item in replacement
            if isinstance(item, Mapping) and isinstance(item.get("id"), str)
        }
    return [message_id for message_id in snapshot if message_id not in kept]


def check_tool_pairing(
    result: Sequence[str],
    calls: Mapping[str, str],
    answers: Mapping[str, str],
    superseded: Sequence[str],
) -> None:
    """Reject a result in which a tool message comes without the call it answers.

    `calls` maps a tool call id to the assistant message making it, `answers` maps a tool
    message to the call id it answers; both cover every message of `result` and of the
    snapshot. A call that was never in the transcript is not checked (it may predate it).
    """
    seen: set[str] = set()
    for message_id in result:
        call_id = answers.get(message_id)
        if call_id is not None and call_id in calls and calls[call_id] not in seen:
            raise CompactionRejected(
                ORPHANED_TOOL_RESULT,
                f"tool message {message_id!r} would come without the assistant message "
                f"{calls[call_id]!r} that makes call {call_id!r}; keep both, in order",
                superseded,
            )
        seen.add(message_id)


def check_result_pairing(
    plan: CompactionPlan, tail: Sequence[str], calls: Mapping[str, str], answers: Mapping[str, str]
) -> None:
    """`check_tool_pairing` of a compaction's result: its replacement, then the `tail` of
    messages appended since the attempt began; `calls` and `answers` of the active messages."""
    calls, answers = dict(calls), dict(answers)
    for new in plan.added:
        new_calls, new_answers = pairing_facts(new.id, new.content)
        calls.update(new_calls)
        answers.update(new_answers)
    check_tool_pairing([*plan.order, *tail], calls, answers, plan.superseded)


def pairing_facts(message_id: str, content: Message) -> tuple[dict[str, str], dict[str, str]]:
    """The (calls, answers) entries one message contributes to `check_tool_pairing`."""
    calls = dict.fromkeys(calls_made(content), message_id)
    answered = call_answered(content)
    return calls, ({message_id: answered} if answered is not None else {})


class ToolPairing:
    """The tool-call facts of a transcript's active messages, kept by its `apply` bodies."""

    calls: dict[str, str]  # tool call id -> active assistant message making it
    answers: dict[str, str]  # active tool message id -> call id it answers

    def note_pairing(self, message_id: str, content: Message) -> None:
        calls, answers = pairing_facts(message_id, content)
        self.calls.update(calls)
        self.answers.update(answers)

    def forget_pairing(self, message_ids: Iterable[str]) -> None:
        gone = set(message_ids)
        self.calls = {call: owner for call, owner in self.calls.items() if owner not in gone}
        self.answers = {m: call for m, call in self.answers.items() if m not in gone}
