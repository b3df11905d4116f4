"""Forked sessions: a fork's rollout holds only its own lines, and names the session it forked
from and where (`history_base`, else `forked_from_id` and `forked_from_ordinal_exclusive`).
Codex starts the fork's context from that session's lines before that ordinal; so does the
import, from that session's rollout, found by its id in the file name."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .rollout import ROLLOUT_GLOB, Line, Rollout, read_rollout

_NAME = re.compile(r"^rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-(.+)\.jsonl$")


class MissingBase(Exception):
    """A fork whose base cannot be read: the rollout it forked from is not found, or forks
    from it again."""

    def __init__(self, session_id: str | None, text: str) -> None:
        super().__init__(text)
        self.session_id = session_id  # the fork's


@dataclass(frozen=True)
class Base:
    """Lines of another session's rollout that a fork's context starts from."""

    session_id: str
    path: Path
    lines: list[Line]  # its records before the fork point, session_meta left out
    notes: list[str]


def fork_point(meta: dict[str, Any]) -> tuple[str, int] | None:
    """(the session a rollout forked from, the ordinal its context stops before), if any."""
    base = meta.get("history_base")
    if isinstance(base, dict):
        parent, end = base.get("thread_id"), base.get("end_ordinal_exclusive")
    else:
        parent, end = meta.get("forked_from_id"), meta.get("forked_from_ordinal_exclusive")
    if isinstance(parent, str) and parent and type(end) is int:
        return parent, end
    return None


class Rollouts:
    """Rollout files by session id, under the folders an import may find a fork's base in."""

    def __init__(self, roots: Iterable[Path]) -> None:
        self.roots = [root for root in dict.fromkeys(roots) if root.is_dir()]
        self._index: dict[str, Path] | None = None

    def find(self, session_id: str) -> Path | None:
        if self._index is None:  # walked once, when a first fork needs it
            self._index = {}
            for root in self.roots:
                for path in sorted(root.rglob(ROLLOUT_GLOB)):
                    found = _NAME.match(path.name)
                    if found:
                        self._index.setdefault(found.group(1), path)
        return self._index.get(session_id)

    def bases(self, rollout: Rollout) -> list[Base]:
        """The lines a fork's context starts from, oldest session first; none for a rollout
        that is no fork. Raise MissingBase if a rollout in the chain is not found."""
        chain: list[Base] = []
        meta = rollout.lines[0].payload if rollout.lines else {}
        fork = meta.get("id") if isinstance(meta, dict) else None
        seen = {fork}
        while isinstance(meta, dict) and (point := fork_point(meta)) is not None:
            parent, end = point
            path = self.find(parent)
            if parent in seen:
                raise MissingBase(
                    fork, f"forked from session {parent}, which forks from it in turn: not imported"
                )
            if path is None:
                raise MissingBase(
                    fork,
                    f"forked from session {parent} (its lines before ordinal {end}), whose "
                    "rollout is not under the paths given nor in the Codex sessions folder: "
                    "not imported (import it with that rollout)",
                )
            seen.add(parent)
            read = read_rollout(path)
            lines = [line for line in read.lines[1:] if _ordinal(line) < end]
            chain.insert(0, Base(parent, path, lines, [*read.notes, *read.doubts]))
            meta = read.lines[0].payload if read.lines else {}
        return chain


def _ordinal(line: Line) -> int:
    """Codex's ordinal of a line, else its place (line 1 holds ordinal 0)."""
    ordinal = line.record.get("ordinal")
    return ordinal if type(ordinal) is int else line.number - 1
