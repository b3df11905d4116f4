"""A committed compaction made where the rows are: a statement per step, however many rows.

Active messages are the history rows above their session's position base (`sessions.
position_base`), at that base plus their `active_messages` position. The compaction's first
`replaced` of them are its snapshot (it is fenced). The replacement goes above every
position the session has (the next base): its kept rows move there first, so that the rest
of the snapshot's range is exactly what it supersedes; the audit row lists those ids
(aggregated in SQL), then their rows are marked superseded where they are, keeping their
positions (positions are never reused). That UPDATE changes no indexed column, so that
PostgreSQL updates the rows in place (HOT) and writes no index entry for them. The rows
after the snapshot move to follow the replacement, the added rows (inserted by the batch)
take their positions, and the session's position base becomes the next base.

Rows are found by the same keys as everywhere: ids, or their digests where ids are not keys
(PostgreSQL), so that the plans use the unique indexes whatever the tables' statistics say.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ....projections.rows import ActiveRow, Supersession
from .dialect import Cursor, Dialect
from .schema import Tables

Place = Callable[[Cursor, Tables, Sequence[ActiveRow], int], None]


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
        base, top = change.base, change.next_base
        end = base + change.replaced  # the snapshot's last position
        head = f"{key('session_id')} AND position BETWEEN {base + 1:d} AND {end:d}"
        if change.kept:
            c.executemany(  # each row by its key; the range only a filter (`position + 0`)
                f"UPDATE {history} SET position = ? WHERE {key('session_id')} AND "
                f"{key('message_id')} AND position + 0 BETWEEN {base + 1:d} AND {end:d}",
                [(top + position, session, message_id) for message_id, position in change.kept],
            )
            c.execute(
                f"SELECT COUNT(*) AS kept FROM {history} "
                f"WHERE {key('session_id')} AND position > {top:d}",
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
            f"UPDATE {history} SET active = ?, superseded_by = ? WHERE {head}",
            (self.dialect.bool_param(False), change.compaction_id, session),
        )
        if top > end:  # the rows appended after the snapshot: above the replacement
            c.execute(
                f"UPDATE {history} SET position = position + {top + change.length - end:d} "
                f"WHERE {key('session_id')} AND position BETWEEN {end + 1:d} AND {top:d}",
                (session,),
            )
        self.place(c, tables, change.added, top)
        c.execute(
            f"UPDATE {tables.sessions} SET position_base = {top:d} WHERE session_id = ?",
            (session,),
        )
