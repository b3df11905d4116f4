"""Whether an in-place compaction's burst of rows committed, from the rows themselves.

A committed `archive_and_compact` inserts its rows in one transaction, and `SessionDB.
_insert_message_rows` (every release with in-place compaction, 0.18.0 to 0.19.0) gives each
row the time of that transaction plus one microsecond per row before it: the rows of a
committed burst are 1 µs apart. A failed commit's rows come from the agent's next flush,
one `append_message` transaction per row, each stamped with the clock when it ran (0.4 ms
apart at the least on the files the tests hold: no two SQLite transactions are 1 µs apart).

Only *fresh* stamps count: a message that carries a stored time (a session resumed from the
database) keeps it on every path, so a copy whose timestamp equals an earlier row's of its
message proves nothing. Two fresh rows at most 1.5 µs a row apart were written in one
transaction: the burst committed. Two fresh rows or more, none that close: it failed. A
burst with fewer than two fresh rows cannot be told by its stamps.

Structure first: a burst whose context still has a live row did not commit (a commit
archives every live row), and one whose own rows are live while its context is archived
did. The stamps decide only when a later commit archived both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from itertools import pairwise

from .blocks import Block
from .rows import HermesRow

# The most one row of a committed burst adds to the previous one's stamp: 1 µs, which a
# float timestamp near 1.8e9 rounds to 0.95 or 1.19 µs.
STEP = 1.5e-6


class Verdict(Enum):
    COMMITTED = "committed"
    FAILED = "failed"
    UNKNOWN = "unknown"


def stamped(rows: Sequence[HermesRow], earlier: Mapping[int, Sequence[HermesRow]]) -> Verdict:
    """What the fresh stamps of a burst's `rows` say. `earlier`: for a row that copies a
    message, the rows that held that message before it."""
    fresh: list[tuple[int, float]] = []
    for row in sorted({row.row_id: row for row in rows}.values(), key=lambda r: r.row_id):
        stamp = _stamp(row)
        if stamp is None or stamp in {_stamp(r) for r in earlier.get(row.row_id, ())}:
            continue
        fresh.append((row.row_id, stamp))
    if len(fresh) < 2:
        return Verdict.UNKNOWN
    one_transaction = any(
        0 < stamp_b - stamp_a <= STEP * (row_b - row_a)
        for (row_a, stamp_a), (row_b, stamp_b) in pairwise(fresh)
    )
    return Verdict.COMMITTED if one_transaction else Verdict.FAILED


def _stamp(row: HermesRow) -> float | None:
    value = row.message.get("timestamp")
    return float(value) if type(value) in (int, float) else None


def judge(
    block: Block, snapshot: Sequence[str], rows_of: Mapping[str, Sequence[HermesRow]]
) -> tuple[Verdict, bool]:
    """Whether `block`, planned over the active `snapshot`, committed; and whether its stamps
    told (a later commit archived it). `rows_of`: each planned message's rows so far."""
    if any(rows_of[m][-1].live for m in snapshot):
        return Verdict.FAILED, False
    written = [block.summary, *block.copies]
    if any(row.live for row in written):
        return Verdict.COMMITTED, False
    earlier = {row.row_id: rows_of[m] for row, m in zip(block.copies, block.kept, strict=True)}
    return stamped(written, earlier), True
