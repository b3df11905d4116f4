"""The shape of what a Hermes compaction writes: head copies, a summary, tail copies.

Copies are matched by content identity (`rows.identity`) against the active context planned
so far: a head repeats its first messages, a tail its last ones, in order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .rows import HermesRow


@dataclass(frozen=True)
class Tail:
    """The rows after a summary that repeat the end of the active context."""

    rows: list[HermesRow] = field(default_factory=list)  # a merged summary's original first
    ids: list[str] = field(default_factory=list)  # the active messages they repeat
    skipped: list[HermesRow] = field(default_factory=list)  # copies of uncommitted summaries


@dataclass(frozen=True)
class Block:
    summary: HermesRow
    head: list[HermesRow]
    head_ids: list[str]
    tail: Tail

    @property
    def copies(self) -> list[HermesRow]:
        return [*self.head, *self.tail.rows]

    @property
    def kept(self) -> list[str]:
        return [*self.head_ids, *self.tail.ids]

    @property
    def merged_kept(self) -> bool:
        """The tail message a merged summary carried is one the context held already."""
        original = self.summary.original
        return original is not None and self.tail.rows[:1] == [original]


def same_burst(row: HermesRow, summary: HermesRow) -> bool:
    """Whether `row` may be a head copy of `summary`: written in one burst, they share its state,
    live or archived, unless an undo that reached back past the summary hid it (and left the
    head live)."""
    return row.live == summary.live or (row.live and summary.hidden)


def match_tail(
    rows: Sequence[HermesRow],
    index: int,
    active: Sequence[str],
    identity: Mapping[str, str],
    uncommitted: set[str],
    floor: int = 0,
) -> tuple[Tail, int]:
    """The longest tail after the summary at `rows[index]` that repeats `active[p:]` for some
    p >= floor, and the index of the first row after it."""
    summary = rows[index]
    room = len(active) - floor
    candidates: list[tuple[HermesRow, int]] = []  # (row, index of the next row)
    if summary.original is not None:
        candidates.append((summary.original, index + 1))
    skipped: list[tuple[HermesRow, int]] = []
    position = index + 1
    while position < len(rows) and len(candidates) < room:
        row = rows[position]
        position += 1
        if row.identity in uncommitted:
            skipped.append((row, position))
        else:
            candidates.append((row, position))
    if not candidates or room <= 0:
        return Tail(), index + 1
    first = candidates[0][0].identity
    for start in range(floor, len(active)):
        length = len(active) - start
        if identity[active[start]] != first or length > len(candidates):
            continue
        run = candidates[:length]
        if all(r.identity == identity[m] for (r, _), m in zip(run, active[start:], strict=True)):
            after = run[-1][1]
            inside = [row for row, next_index in skipped if next_index <= after]
            tail = Tail([r for r, _ in run], list(active[start:]), inside)
            return tail, after
    return Tail(), index + 1
