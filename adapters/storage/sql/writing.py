"""Writing what a batch of events did to the views (`ViewChanges`) into a set of view tables.

The full-text index is not written here: it catches up from `message_history` when searched
(`search_catch_up`); an erased session's entries are deleted with its rows.

Rows are inserted and updated in bulk (`executemany`), content columns sealed on an
encrypted store. An erased session's rows go first: the batch holds no other row of it.
Rewind marks go before supersessions: a message is superseded only while active, and stays
so. `active_messages` is the history rows above their session's position base: a message
appended by the batch gets its position (the base plus its place in the context) with its
history row, one restored or added by a compaction has its row updated, and a rewritten
active list first takes every position above the base.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson

from ....projections.rows import ActiveRow, QuarantineRow, ViewChanges
from ..sealing import ContentColumns
from .dialect import Cursor, Dialect
from .schema import LIVE, NEXT, VERSIONS_TABLE, Tables
from .search import SEARCH_TRACKING_NAME, SearchIndex
from .supersession import Superseder


def _json(value: object) -> str:
    return orjson.dumps(value).decode()


class ChangeWriter:
    def __init__(self, dialect: Dialect, content: ContentColumns, search: SearchIndex) -> None:
        self.dialect = dialect
        self.content = content
        self.search = search
        self.superseder = Superseder(dialect, self._place)

    def write(self, c: Cursor, tables: Tables, changes: ViewChanges) -> None:
        """Everything one batch did to the views."""
        time, flag, content = self.dialect.time_param, self.dialect.bool_param, self.content
        for transcript in changes.erased:  # first: the batch holds no other row of theirs
            session_id = changes.sessions[transcript].session_id
            self._erase_rows(c, tables, session_id, transcript)
            if tables is LIVE:
                self._erase_from_rebuild(c, session_id, transcript)
        bases = {s.session_id: s.position_base for s in changes.sessions.values()}
        appended = {
            (a.session_id, a.message_id): bases[a.session_id] + a.position
            for a in changes.active_appends
        }
        if changes.history_inserts:
            c.executemany(
                f"INSERT INTO {tables.message_history} VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (h.session_id, h.seq, h.message_id, h.role, content.json(h.message),
                     flag(h.active), h.superseded_by, h.added_by, time(h.appended_at),
                     h.appended_version, h.rewound_version, h.restored_version,
                     appended.get(key), h.log_position)
                    for key, h in changes.history_inserts.items()
                ],
            )  # fmt: skip
        if changes.marks:
            c.executemany(
                f"UPDATE {tables.message_history} SET active = ?, rewound_version = ?, "
                "restored_version = COALESCE(?, restored_version) "
                "WHERE session_id = ? AND message_id = ?",
                [
                    (flag(m.active), m.rewound_version, m.restored_version, *key)
                    for key, m in changes.marks.items()
                ],
            )
        session, key = self.dialect.columns.session_match(), self.dialect.columns.session_params
        for session_id, rows in changes.active_rewrites.items():
            c.execute(
                f"UPDATE {tables.message_history} SET position = NULL "
                f"WHERE {session} AND position > ?",
                (*key(session_id), bases[session_id]),
            )
            self._place(c, tables, rows, bases[session_id])
        restored: dict[str, list[ActiveRow]] = {}  # by session
        for a in changes.active_appends:
            if (a.session_id, a.message_id) not in changes.history_inserts:
                restored.setdefault(a.session_id, []).append(a)
        for session_id, rows in restored.items():
            self._place(c, tables, rows, bases[session_id])
        if changes.attempts:
            c.executemany(
                f"INSERT INTO {tables.compaction_attempts} "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (a.compaction_id, a.session_id, a.version, a.status,
                     content.text(a.reason), a.failure, content.text(a.error),
                     a.based_on_version, a.superseded_count, a.added_count,
                     _json(a.superseded_ids), _json(a.added_ids), a.tokens_before,
                     a.tokens_after, time(a.at),
                     None if a.metadata is None else content.json(a.metadata))
                    for a in changes.attempts
                ],
            )  # fmt: skip
        started = [s for t, s in changes.sessions.items() if t in changes.started]
        if started:
            c.executemany(
                f"INSERT INTO {tables.sessions} VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (s.session_id, s.transcript_id, s.source, s.model, s.parent_id,
                     content.json(s.metadata), time(s.started_at), time(s.last_event_at),
                     s.version, s.message_count, s.active_count, s.compactions_committed,
                     s.compactions_failed, s.quarantined,
                     None if s.erased_at is None else time(s.erased_at), s.rewound_count,
                     content.json(s.state), s.context_version, s.position_base)
                    for s in started
                ],
            )  # fmt: skip
        updated = [s for t, s in changes.sessions.items() if t not in changes.started]
        if updated:
            c.executemany(
                f"UPDATE {tables.sessions} SET last_event_at = ?, version = ?, message_count = ?, "
                "active_count = ?, compactions_committed = ?, compactions_failed = ?, "
                "quarantined = ?, rewound_count = ?, context_version = ?, position_base = ? "
                "WHERE session_id = ?",
                [
                    (time(s.last_event_at), s.version, s.message_count, s.active_count,
                     s.compactions_committed, s.compactions_failed, s.quarantined,
                     s.rewound_count, s.context_version, s.position_base, s.session_id)
                    for s in updated
                ],
            )  # fmt: skip
        changed = [s for s in updated if s.transcript_id in changes.states - changes.erased]
        if changed:
            c.executemany(
                f"UPDATE {tables.sessions} SET state = ? WHERE session_id = ?",
                [(content.json(s.state), s.session_id) for s in changed],
            )
        erased = [s for s in updated if s.transcript_id in changes.erased]
        if erased:
            c.executemany(
                f"UPDATE {tables.sessions} SET source = ?, model = ?, parent_id = NULL, "
                "metadata = ?, state = ?, started_at = ?, erased_at = ? WHERE session_id = ?",
                [
                    (s.source, s.model, content.json(s.metadata), content.json(s.state),
                     time(s.started_at), time(s.erased_at), s.session_id)
                    for s in erased
                    if s.erased_at is not None
                ],
            )  # fmt: skip
        self.quarantine(c, tables, changes.quarantine)
        if changes.supersession is not None:  # last: on the rows as the rest left them
            self.superseder.write(c, tables, changes.supersession)

    def _erase_rows(self, c: Cursor, tables: Tables, session_id: str, transcript_id: str) -> None:
        """Delete an erased session's rows from every view but `sessions`, and its entries
        from the search index (holding the index's lock: a catch-up indexing them at the
        same time would put them back)."""
        self.dialect.lock_index(c)
        # A rebuilt index is empty until it is swapped in and searched.
        indexed = self.dialect.tracked(c, SEARCH_TRACKING_NAME) if tables == LIVE else 0
        self.search.erase(c, tables, session_id, indexed)
        columns = self.dialect.columns
        c.execute(
            f"DELETE FROM {tables.message_history} WHERE {columns.session_match()}",
            columns.session_params(session_id),
        )
        c.execute(f"DELETE FROM {tables.compaction_attempts} WHERE session_id = ?", (session_id,))
        c.execute(
            f"DELETE FROM {tables.quarantined_events} WHERE transcript_id = ?", (transcript_id,)
        )

    def _erase_from_rebuild(self, c: Cursor, session_id: str, transcript_id: str) -> None:
        """Erase the session from a rebuild's tables too, if there are any: one running,
        whose next batches take the tombstone (its events are gone from the log), or one
        that stopped and left them behind, holding copies of every message. Its `sessions`
        row goes too (it holds the metadata), unless the rebuild has taken the tombstone
        already (PostgreSQL: the live views may take it after a rebuild's batch did): the
        tombstone, projected, makes it again."""
        if self.dialect.relation_kind(c, NEXT.sessions) is None:
            return
        self._erase_rows(c, NEXT, session_id, transcript_id)
        c.execute(
            f"DELETE FROM {NEXT.sessions} WHERE session_id = ? AND erased_at IS NULL",
            (session_id,),
        )

    @staticmethod
    def _place(c: Cursor, tables: Tables, rows: Sequence[ActiveRow], base: int) -> None:
        """Give stored history rows their positions in the active list, above `base`."""
        if rows:
            c.executemany(
                f"UPDATE {tables.message_history} SET position = ? "
                "WHERE session_id = ? AND message_id = ?",
                [(base + a.position, a.session_id, a.message_id) for a in rows],
            )

    @staticmethod
    def quarantine(c: Cursor, tables: Tables, rows: Sequence[QuarantineRow]) -> None:
        if rows:
            c.executemany(
                f"INSERT INTO {tables.quarantined_events} VALUES (?,?,?,?,?,?)",
                [
                    (q.position, q.transcript_id, q.session_id, q.version, q.topic, q.reason)
                    for q in rows
                ],
            )

    @staticmethod
    def versions(c: Cursor, versions: Mapping[str, int]) -> None:
        """Record the view versions the tables were built with."""
        c.execute(f"DELETE FROM {VERSIONS_TABLE}")
        c.executemany(f"INSERT INTO {VERSIONS_TABLE} VALUES (?, ?)", list(versions.items()))
