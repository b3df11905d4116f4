"""A committed compaction made where the rows are: a statement per step, however many rows.

Active messages are the history rows that have a position. The compaction's first
`replaced` of them are its snapshot (it is fenced). Its kept rows are moved out of the way
first (to their new positions, negated), so that the rest of the range is exactly what it
supersedes: the audit row lists those ids (aggregated in SQL), then their rows are marked
superseded and lose their positions. The rows after the range move to follow the
replacement (negated too, so that no two rows ever share a position), every negated
position is turned back, and the added rows (inserted by the batch) take their positions.

Rows are found by the same keys as everywhere: ids, or their digests where ids are not keys
(PostgreSQL), so that the plans use the unique indexes whatever the tables' statistics say.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ....projections.rows import ActiveRow, Supersession
from .dialect import Cursor, Dialect
from .schema import Tables

Place = Callable[[Cursor, Tables, Sequence[ActiveRow]], None]


class Superseder:
    """Makes a committed compaction's `Supersession` in a set of view tables."""

    def __init__(self, dialect: Dialect, place: Place) -> None:
        self.dialect = dialect
        self.place = place
        digest = dialect.columns.id_digest
        self.key: Callable[[str], str] = (
            (lambda column: f"{column} = ?")
            if digest is None
            else (lambda column: f"{digest}({column}) = {digest}(?)")
        )

    def write(self, c: Cursor, tables: Tables, change: Supersession) -> None:
        """The steps above, in order, in the batch's transaction."""
        history, session, key = tables.message_history, change.session_id, self.key
        replaced = change.replaced
        head = f"{key('session_id')} AND position BETWEEN 1 AND {replaced:d}"
        if change.kept:
            c.executemany(  # each row by its key; the range only a filter (`position + 0`)
                f"UPDATE {history} SET position = ? WHERE {key('session_id')} AND "
                f"{key('message_id')} AND position + 0 BETWEEN 1 AND {replaced:d}",
                [(-position, session, message_id) for message_id, position in change.kept],
            )
            c.execute(
                f"SELECT COUNT(*) AS kept FROM {history} "
                f"WHERE {key('session_id')} AND position < 0",
                (session,),
            )
            if c.fetchone()["kept"] != len(change.kept):
                raise ValueError("a compaction keeps messages it does not replace")
        ids = self.dialect.columns.id_array.format(ids="message_id", order="position")
        c.execute(
            f"UPDATE {tables.compaction_attempts} SET superseded_ids = (SELECT {ids} FROM "
            f"(SELECT message_id, position FROM {history} WHERE {head} ORDER BY position) "
            "AS superseded) WHERE compaction_id = ?",
            (session, change.compaction_id),
        )
        c.execute(
            f"UPDATE {history} SET active = ?, superseded_by = ?, position = NULL WHERE {head}",
            (self.dialect.bool_param(False), change.compaction_id, session),
        )
        shift = change.length - replaced
        if shift:
            c.execute(
                f"UPDATE {history} SET position = ? - position "
                f"WHERE {key('session_id')} AND position > {replaced:d}",
                (-shift, session),
            )
        if shift or change.kept:
            c.execute(
                f"UPDATE {history} SET position = -position "
                f"WHERE {key('session_id')} AND position < 0",
                (session,),
            )
        self.place(c, tables, change.added)
