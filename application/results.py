"""Values the store hands back for compactions and erasures."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class CompactionAttempt:
    """A compaction in progress: the active snapshot it is computed against.

    Pass it back to `commit_compaction` or `fail_compaction` of the store that began it.
    """

    id: str
    session_id: str
    version: int
    messages: list[dict[str, Any]]
    store_token: object = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class CompactionResult:
    """How an attempt ended. `messages` is the active list as stored: adopt it."""

    committed: bool
    compaction_id: str
    messages: list[dict[str, Any]]
    failure: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Erasure:
    """What `forget` erased: the counts its tombstone records, and when.

    `already_erased`: an earlier call erased the session; this one changed nothing (it only
    cleaned the store's files again).
    """

    session_id: str
    started_at: datetime
    erased_at: datetime
    messages: int
    compactions_committed: int
    compactions_failed: int
    events: int  # events deleted
    already_erased: bool = False
