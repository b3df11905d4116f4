"""What importing one rollout does, step by step: the values `plan` makes and `importer`
carries out, in order. Every step names the rollout line it comes from (line 1, which names
the base, for the steps of a fork's base)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SOURCE = "codex"
WINDOW_EXCEEDED = "context_window_exceeded"  # Codex's error code, and our failure code


@dataclass(frozen=True)
class Append:
    """Append one message (with its stable id)."""

    line: int
    message: dict[str, Any]


@dataclass
class Compact:
    """Begin a compaction on `snapshot` and commit `replacement`: kept ids, and new messages
    with their ids. `commits` is False when the store will refuse it (a tool output would lose
    its call): the store then records the failure itself."""

    line: int
    reason: str
    snapshot: list[str]
    replacement: list[str | dict[str, Any]]
    commits: bool
    tokens_before: int | None = None
    tokens_after: int | None = None  # the first token count after it, once read

    @property
    def added(self) -> list[dict[str, Any]]:
        return [item for item in self.replacement if not isinstance(item, str)]


@dataclass(frozen=True)
class Fail:
    """Begin a compaction on `snapshot` and record it failed: nothing changes. The attempt
    was asked to summarise `asked`, the context before its turn; the messages its turn wrote
    after it failed are in `snapshot` too, and not among what it would have superseded."""

    line: int
    reason: str
    snapshot: list[str]
    asked: list[str]
    error: str


Step = Append | Compact | Fail


@dataclass
class SessionPlan:
    """A rollout's session: how to start it, its steps, and what they make of it."""

    path: Path
    whole_lines: int  # the number of the rollout's last whole line
    session_id: str
    parent_id: str | None  # the session it forked from
    model: str | None
    metadata: dict[str, Any]
    steps: list[Step] = field(default_factory=list)
    active: list[str] = field(default_factory=list)  # the context once imported
    notes: list[str] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)  # what the import could not tell

    @property
    def messages(self) -> int:
        """Messages in the history once imported."""
        appended = sum(isinstance(step, Append) for step in self.steps)
        return appended + sum(len(s.added) for s in self.compactions if s.commits)

    @property
    def compactions(self) -> list[Compact]:
        return [step for step in self.steps if isinstance(step, Compact)]

    @property
    def committed(self) -> int:
        return sum(step.commits for step in self.compactions)

    @property
    def failed(self) -> int:
        return sum(isinstance(step, Fail) for step in self.steps) + sum(
            not step.commits for step in self.compactions
        )


def derived_id(session_id: str, key: str, index: int | None = None) -> str:
    """The id of an item that has none (or whose id cannot be kept): the rollout's id, the
    line's ordinal (or `line<N>`) and, within a compaction's replacement, the item's index."""
    return f"codex-{session_id}-{key}" + ("" if index is None else f"-{index}")
