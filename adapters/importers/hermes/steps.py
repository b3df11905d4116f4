"""What importing one Hermes session does, step by step: the values `plan` makes and
`importer` carries out, in order."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Append:
    """Append one message (with its stable id)."""

    message: dict[str, Any]


@dataclass(frozen=True)
class Compact:
    """Begin a compaction and commit `replacement` (kept ids, or the new summary message).

    `commits` is False when the store will refuse it (a tool result losing its call): the
    store then records the failure itself.
    """

    reason: str
    snapshot: list[str]
    replacement: list[str | dict[str, Any]]
    superseded: list[str]
    summary_id: str | None  # the planned id standing for the summary the store will add
    commits: bool
    tokens_before: int | None = None
    tokens_after: int | None = None


@dataclass(frozen=True)
class Fail:
    """Begin a compaction and record it as failed (failure code `storage_error`); the audit
    lists what `replacement` (kept ids and the summary) would have superseded."""

    reason: str
    snapshot: list[str]
    error: str
    replacement: list[str | dict[str, Any]] | None  # None: what it held cannot be told


@dataclass(frozen=True)
class Rewind:
    """Take `message_ids`, the last messages of the active context, out of it in one
    `store.rewind` (Hermes' /undo): they stay in the history, marked rewound."""

    reason: str
    message_ids: list[str]


Unit = Append | Compact | Fail | Rewind


@dataclass
class SessionPlan:
    units: list[Unit] = field(default_factory=list)
    messages: int = 0  # messages in the history once imported
    active: int = 0
    committed: int = 0  # compactions
    failed: int = 0
    rewinds: int = 0
    notes: list[str] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)  # what the import could not tell
    # Rows, by what the plan found them to be:
    failed_blocks: list[int] = field(default_factory=list)  # summaries of failed commits
    copies_dropped: list[int] = field(default_factory=list)  # their head and tail copies
    stray_copies: list[int] = field(default_factory=list)  # copies of uncommitted summaries
    carried: list[int] = field(default_factory=list)  # copies a committed compaction kept
    merged: list[int] = field(default_factory=list)  # committed summaries merged into a message
    lone_summaries: list[int] = field(default_factory=list)  # failed commits with no copies
    # Summaries of bursts a later commit archived, by what their stamps told ("committed",
    # "failed"; see `evidence`):
    stamped: dict[str, list[int]] = field(default_factory=dict)

    @property
    def duplicates_dropped(self) -> int:
        return len(self.copies_dropped) + len(self.stray_copies)

    @property
    def repaired(self) -> bool:
        return bool(self.failed_blocks or self.stray_copies)


def message_id(session_id: str, row_id: int) -> str:
    return f"hermes-{session_id}-{row_id}"


def row_ranges(row_ids: Iterable[int]) -> str:
    """`[1, 2, 3, 7]` -> `"1–3, 7"`."""
    ordered = sorted(set(row_ids))
    parts: list[str] = []
    start = previous = None
    for row_id in [*ordered, None]:
        if previous is not None and row_id == previous + 1:
            previous = row_id
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}–{previous}")
        start = previous = row_id
    return ", ".join(parts)
