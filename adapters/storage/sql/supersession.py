"""A committed compaction made where the rows are: a statement per step, however many rows.

The compaction's first `replaced` active rows are its snapshot (it is fenced). Its kept rows
are moved out of the way first (to their new positions, negated), so that the rest of the
range is exactly what it supersedes: the audit row lists those ids (aggregated in SQL), their
history rows are marked superseded, and they are deleted. The rows after the range move to
follow the replacement (negated too, so that no two rows ever share a position), every
negated position is turned back, and the added rows are inserted.

Rows are found by the same keys as everywhere: ids, or their digests where ids are not keys
(PostgreSQL), so that the plans use the unique indexes whatever the tables' statistics say.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ....projections.rows import ActiveRow, Supersession
from .dialect import Cursor, Dialect
from .schema import Tables

InsertActive = Callable[[Cursor, Tables, Sequence[ActiveRow]], None]


class Superseder:
    """Makes a committed compaction's `Supersession` in a set of view tables."""

    def __init__(self, dialect: Dialect, insert_active: InsertActive) -> None:
        self.dialect = dialect
        self.insert_active = insert_active
        digest = dialect.columns.id_digest
        self.key: Callable[[str], str] = (
            (lambda column: f"{column} = ?")
            if digest is None
            else (lambda column: f"{digest}({column}) = {digest}(?)")
        )
        self.same: Callable[[str, str], str] = (
            (lambda a, b: f"{a} = {b}")
            if digest is None
            else (lambda a, b: f"{digest}({a}) = {digest}({b})")
        )

    def write(self, c: Cursor, tables: Tables, change: Supersession) -> None:
        """The steps above, in order, in the batch's transaction."""
        active, history, session = tables.active_messages, tables.message_history, change.session_id
        key, same, replaced = self.key, self.same, change.replaced

        def head(alias: str = "") -> str:
            return f"{key(alias + 'session_id')} AND {alias}position BETWEEN 1 AND {replaced:d}"

        if change.kept:
            c.executemany(
                f"UPDATE {active} SET position = ? WHERE {key('session_id')} "
                f"AND {key('message_id')} AND position BETWEEN 1 AND {replaced:d}",
                [(-position, session, message_id) for message_id, position in change.kept],
            )
            c.execute(
                f"SELECT COUNT(*) AS kept FROM {active} WHERE {key('session_id')} AND position < 0",
                (session,),
            )
            if c.fetchone()["kept"] != len(change.kept):
                raise ValueError("a compaction keeps messages it does not replace")
        ids = self.dialect.columns.id_array.format(ids="message_id", order="position")
        c.execute(
            f"UPDATE {tables.compaction_attempts} SET superseded_ids = (SELECT {ids} FROM "
            f"(SELECT message_id, position FROM {active} WHERE {head()} ORDER BY position) "
            "AS superseded) WHERE compaction_id = ?",
            (session, change.compaction_id),
        )
        c.execute(  # by seq: the history rows in their order, not the ids' (random) order
            f"UPDATE {history} SET active = ?, superseded_by = ? WHERE {key('session_id')} "
            f"AND seq IN (SELECT h.seq FROM {active} AS a JOIN {history} AS h "
            f"ON {same('h.session_id', 'a.session_id')} AND {same('h.message_id', 'a.message_id')} "
            f"WHERE {head('a.')})",
            (self.dialect.bool_param(False), change.compaction_id, session, session),
        )
        c.execute(f"DELETE FROM {active} WHERE {head()}", (session,))
        shift = change.length - replaced
        if shift:
            c.execute(
                f"UPDATE {active} SET position = ? - position "
                f"WHERE {key('session_id')} AND position > {replaced:d}",
                (-shift, session),
            )
        if shift or change.kept:
            c.execute(
                f"UPDATE {active} SET position = -position "
                f"WHERE {key('session_id')} AND position < 0",
                (session,),
            )
        self.insert_active(c, tables, change.added)
