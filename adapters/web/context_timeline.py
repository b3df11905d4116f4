"""The story of a session's context: its size over the session's versions, and a mark at every
event that changed it other than by an append — the one place that computes them, for the
web app, the HTML export and the terminal timeline.

The size is exact and needs no message: every event after `Started` is an append (one more
message, a restore too), a committed compaction (its added messages in, its superseded ones
out), a failed one (no change) or a rewind (its messages out). So the curve is a straight
line of slope 1 between two marks, and its points are the marks' ends: what is read is the
compaction audit, the `Rewound` events (found by the log's key, each read on its own) and,
only for messages rewound and no longer rewound, when they were restored — never the
session's messages, whatever its length.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from typing import Any

from ... import TranscriptStore

COMMITTED, FAILED, REWOUND, RESTORED = (
    "CompactionCommitted",
    "CompactionFailed",
    "Rewound",
    "Restored",
)
MARK_TYPES = (COMMITTED, FAILED, REWOUND, RESTORED)
SYMBOLS = {COMMITTED: "✂", FAILED: "✗", REWOUND: "↶", RESTORED: "↷"}


@dataclass(frozen=True)
class Rewind:
    """A `Rewound` event: the messages it took out of the context, and why."""

    version: int
    at: datetime
    message_ids: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Restore:
    """An append that brought a rewound message back (a `MessageAppended` event)."""

    version: int
    message_id: str


@dataclass(frozen=True)
class Mark:
    """An event on the timeline: a compaction attempt, a rewind or a restore.

    `before` and `after` are the active context's size (messages) around it; `attempt` is
    the audit entry of a compaction, `message_ids` what a rewind took out or a restore
    brought back."""

    type: str
    version: int
    before: int
    after: int
    attempt: dict[str, Any] | None = None
    message_ids: tuple[str, ...] = ()
    reason: str = ""

    @property
    def symbol(self) -> str:
        return SYMBOLS[self.type]

    @property
    def name(self) -> str:
        """What names the mark for people and tools: its type and its version."""
        return f"{self.type} at version {self.version}"

    @property
    def summary(self) -> str:
        """What it did, in a few words."""
        if self.attempt is None:
            count = len(self.message_ids)
            noun = "message" if count == 1 else "messages"
            did = "rewound" if self.type == REWOUND else "restored"
            return f"{count:,} {noun} {did}" + (f" ({self.reason})" if self.reason else "")
        attempt = self.attempt
        if attempt["status"] == "committed":
            text = f"{len(attempt['superseded']):,} superseded, {len(attempt['added']):,} added"
        else:
            text = f"{attempt['failure']}: {first_line(attempt['error'] or '')}"
        tokens = (attempt["tokens_before"], attempt["tokens_after"])
        if None not in tokens:
            text += f", tokens {tokens[0]:,} → {tokens[1]:,}"
        return text + (f" ({attempt['reason']})" if attempt["reason"] else "")

    @property
    def label(self) -> str:
        """The accessible name: type, version and what it did."""
        return f"{self.name}: {self.summary}"


@dataclass(frozen=True)
class Point:
    version: int
    size: int


@dataclass(frozen=True)
class ContextTimeline:
    """The active context's size at every version from 1 to `head`, as the points where the
    curve bends (a straight line of slope 1 between them), the marks, and the tokens the
    compactions measured (before and after each, where known)."""

    session_id: str
    head: int
    points: tuple[Point, ...]
    marks: tuple[Mark, ...]
    tokens: tuple[Point, ...]

    @property
    def largest(self) -> int:
        return max((point.size for point in self.points), default=0)

    @property
    def size(self) -> int:
        """The active context's size at the head."""
        return self.points[-1].size if self.points else 0

    def size_at(self, version: int) -> int:
        """The active context's size right after event `version` (1 to `head`)."""
        earlier = [point for point in self.points if point.version <= version]
        last = earlier[-1]
        if last is self.points[-1]:
            return last.size
        return last.size + version - last.version  # only appends between two points

    def counts(self) -> dict[str, int]:
        """How many marks of each type."""
        return {kind: sum(mark.type == kind for mark in self.marks) for kind in MARK_TYPES}

    @classmethod
    def of(
        cls,
        session_id: str,
        head: int,
        attempts: Iterable[dict[str, Any]],
        rewinds: Iterable[Rewind],
        restores: Iterable[Restore],
    ) -> ContextTimeline:
        """The timeline of a session whose last event is `head`, from its compaction audit,
        its rewinds and its restores (any order; only those up to `head` count)."""
        changes: list[tuple[int, str, Any]] = [
            (attempt["version"], COMMITTED if attempt["status"] == "committed" else FAILED, attempt)
            for attempt in attempts
        ]
        changes += [(rewind.version, REWOUND, rewind) for rewind in rewinds]
        changes += [(restore.version, RESTORED, restore) for restore in restores]
        changes = sorted((c for c in changes if c[0] <= head), key=lambda change: change[0])
        points, marks, tokens = [Point(1, 0)], [], []
        size, version = 0, 1  # after `Started`
        for at, kind, change in changes:
            size += at - version - 1  # the appends in between
            mark = _mark(kind, at, size, change)
            marks.append(mark)
            size, version = mark.after, at
            if kind == RESTORED:
                continue  # an append: the line goes on
            if at - 1 > points[-1].version:
                points.append(Point(at - 1, mark.before))
            points.append(Point(at, mark.after))
            tokens += _tokens(mark)
        if head > points[-1].version:
            points.append(Point(head, size + head - version))
        return cls(session_id, head, tuple(points), tuple(marks), tuple(tokens))


def _mark(kind: str, version: int, size: int, change: Any) -> Mark:
    if kind == REWOUND:
        ids = change.message_ids
        return Mark(kind, version, size, size - len(ids), message_ids=ids, reason=change.reason)
    if kind == RESTORED:  # an append: one more
        return Mark(kind, version, size, size + 1, message_ids=(change.message_id,))
    delta = len(change["added"]) - len(change["superseded"]) if kind == COMMITTED else 0
    return Mark(kind, version, size, size + delta, attempt=change, reason=change["reason"])


def _tokens(mark: Mark) -> list[Point]:
    attempt = mark.attempt or {}
    before, after = attempt.get("tokens_before"), attempt.get("tokens_after")
    points = [] if before is None else [Point(mark.version - 1, before)]
    if after is not None and attempt.get("status") == "committed":
        points.append(Point(mark.version, after))
    return points


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


# -- reading it from a store ------------------------------------------------------------------


def read_timeline(
    store: TranscriptStore,
    session_id: str,
    session: dict[str, Any],
    *,
    until: int | None = None,
) -> ContextTimeline:
    """The timeline of `session` (its `sessions()` entry) read from `store`, up to version
    `until` (default: its last)."""
    head = session["version"] if until is None else min(until, session["version"])
    attempts = [attempt for attempt in store.compactions(session_id) if attempt["version"] <= head]
    rewinds = read_rewinds(store, session_id, until=head)
    restores = read_restores(store, session_id, rewinds, still_rewound=session["rewound"])
    return ContextTimeline.of(session_id, head, attempts, rewinds, restores)


def read_rewinds(store: TranscriptStore, session_id: str, *, until: int) -> list[Rewind]:
    events = store.iter_events(session_id, types={REWOUND}, until=until)
    return [
        Rewind(event["version"], event["at"], tuple(data["message_ids"]), data["reason"])
        for event in events
        for data in [event["data"]]
    ]


def read_restores(
    store: TranscriptStore, session_id: str, rewinds: Sequence[Rewind], *, still_rewound: int
) -> list[Restore]:
    """When the rewound messages were restored.

    A message rewound again must have been restored in between (only an append brings a
    rewound message back): that restore is found in the log between the two rewinds. After
    its last rewind, a message is restored at most once, which its history row records
    (`explain`). Messages still rewound need no look-up at all: when as many are rewound as
    were ever, none was restored since its last rewind."""
    rewound_at: dict[str, list[int]] = {}
    for rewind in rewinds:
        for message_id in rewind.message_ids:
            rewound_at.setdefault(message_id, []).append(rewind.version)
    restores: list[Restore] = []
    for message_id, versions in rewound_at.items():
        for earlier, later in pairwise(versions):
            restores.append(_restore_between(store, session_id, message_id, earlier, later))
    left = len(rewound_at) - still_rewound  # restored after their last rewind
    for message_id, versions in reversed(rewound_at.items()):
        if left <= 0:
            break
        restored = store.explain(session_id, message_id)["restored"]
        if restored is not None and restored["version"] > versions[-1]:
            restores.append(Restore(restored["version"], message_id))
            left -= 1
    return restores


def _restore_between(
    store: TranscriptStore, session_id: str, message_id: str, after: int, until: int
) -> Restore:
    for event in store.iter_events(session_id, after=after, until=until):
        if event["type"] == "MessageAppended" and event["data"]["message_id"] == message_id:
            return Restore(event["version"], message_id)
    raise LookupError(f"no restore of {message_id!r} between versions {after} and {until}")
