"""A compaction attempt, before and after.

A commit at version V: before is the active context right before it (`active_at(V - 1)`:
the attempt's snapshot, then what was appended while it ran), after is its replacement in
order followed by those later messages — the commit event's `order` and `replaced`, its
added messages from the event itself. A failed attempt changed nothing: its would-have-been
is its snapshot (`active_at(based_on_version)`) with the messages it would have superseded,
the replacement it proposed (when the store kept it), the error and the traceback.

Runs of messages of one kind (superseded, kept, added, appended meanwhile) are grouped; a
long run lists its first and last messages and says how many are between (the replay of
the version shows them all).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ... import CompactionNotFoundError, TranscriptStore
from .messages import MessageView, paired
from .pages import NotFound, session_summary

SUPERSEDED, KEPT, ADDED, LATER = "superseded", "kept", "added", "later"
RUN_ENDS = 50  # a run lists at most its first and last 50 messages


@dataclass
class Run:
    kind: str
    count: int = 0
    head: list[MessageView] = field(default_factory=list)
    tail: list[MessageView] = field(default_factory=list)
    first: int = 0  # position in its list of the run's first message (1, …)

    @property
    def left_out(self) -> int:
        return self.count - len(self.head) - len(self.tail)


@dataclass(frozen=True)
class CompactionPage:
    session: dict[str, Any]
    attempt: dict[str, Any]
    before: list[Run]
    after: list[Run]  # a commit's result; empty for a failed attempt
    before_version: int  # the version `before` is the context at
    proposed: list[MessageView]  # a failed attempt's rejected replacement, when kept
    exception: dict[str, Any] | None  # {"type", "message", "traceback"}, when kept

    @property
    def committed(self) -> bool:
        return self.attempt["status"] == "committed"

    @property
    def proposal_kept(self) -> bool:
        """Whether the store keeps what a failed attempt proposed (`proposed`: None when it
        proposed no replacement)."""
        return "proposed" in self.attempt

    @property
    def added_count(self) -> int | None:
        if self.committed:
            return len(self.attempt["added"])
        return len(self.proposed) if self.proposal_kept else None

    @property
    def tokens_saved(self) -> int | None:
        before, after = self.attempt["tokens_before"], self.attempt["tokens_after"]
        return None if before is None or after is None else before - after


def compaction_page(store: TranscriptStore, session_id: str, compaction_id: str) -> CompactionPage:
    session = session_summary(store, session_id)
    attempt = find_attempt(store, session_id, compaction_id)
    version = attempt["version"]
    if attempt["status"] == "committed":
        before = store.active_at(session_id, version - 1)
        commit = next(iter(store.iter_events(session_id, after=version - 1, until=version)))
        return committed(session, attempt, before, commit["data"])
    return failed(session, attempt, store.active_at(session_id, attempt["based_on_version"]))


def committed(
    session: dict[str, Any],
    attempt: dict[str, Any],
    before: list[dict[str, Any]],
    data: dict[str, Any],
) -> CompactionPage:
    """A commit: `before`, the context right before it; `data`, its event's."""
    superseded = set(attempt["superseded"])
    after = committed_context(before, data)
    kinds_before = [
        SUPERSEDED if m["id"] in superseded else KEPT if i < data["replaced"] else LATER
        for i, m in enumerate(before)
    ]
    added = {new["id"] for new in data["added"]}
    kinds_after = [
        ADDED if m["id"] in added else KEPT if i < len(data["order"]) else LATER
        for i, m in enumerate(after)
    ]
    before_runs, after_runs = runs(before, kinds_before), runs(after, kinds_after)
    return CompactionPage(
        session, attempt, before_runs, after_runs, attempt["version"] - 1, [], None
    )


def failed(
    session: dict[str, Any], attempt: dict[str, Any], snapshot: list[dict[str, Any]]
) -> CompactionPage:
    """A failed attempt: `snapshot`, the context it was computed against."""
    superseded = set(attempt["superseded"])
    kinds = [SUPERSEDED if m["id"] in superseded else KEPT for m in snapshot]
    return CompactionPage(
        session,
        attempt,
        runs(snapshot, kinds),
        [],
        attempt["based_on_version"],
        paired(attempt["proposed"] or [], whole=True),  # never stored: shown whole
        attempt.get("exception"),
    )


def find_attempt(store: TranscriptStore, session_id: str, compaction_id: str) -> dict[str, Any]:
    """One attempt whole (`store.compaction`: with what it proposed and the exception it
    met); NotFound if the session made no such attempt."""
    try:
        return store.compaction(session_id, compaction_id)
    except CompactionNotFoundError:
        raise NotFound(f"session {session_id!r} made no compaction {compaction_id!r}") from None


def committed_context(before: list[dict[str, Any]], data: dict[str, Any]) -> list[dict[str, Any]]:
    """The active context right after a commit: its replacement, in order, then the messages
    appended after its attempt began (`data`: the `CompactionCommitted` event's)."""
    by_id = {message["id"]: message for message in before[: data["replaced"]]}
    by_id.update((new["id"], {**new["message"], "id": new["id"]}) for new in data["added"])
    return [by_id[message_id] for message_id in data["order"]] + before[data["replaced"] :]


def runs(messages: list[dict[str, Any]], kinds: Iterable[str]) -> list[Run]:
    """Consecutive messages of one kind as runs, each listing its ends."""
    views = paired(messages)
    grouped: list[Run] = []
    for position, (view, kind) in enumerate(zip(views, kinds, strict=True), 1):
        if not grouped or grouped[-1].kind != kind:
            grouped.append(Run(kind, first=position))
        run = grouped[-1]
        run.count += 1
        if len(run.head) < RUN_ENDS:
            run.head.append(view)
        else:
            run.tail.append(view)
            if len(run.tail) > RUN_ENDS:
                run.tail.pop(0)
    return grouped
