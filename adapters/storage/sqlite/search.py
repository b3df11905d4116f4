"""Full-text search over every message ever stored, with SQLite FTS5.

`message_search` is an FTS5 table of the text of every `message_history` row (see
`projections.search_text`), keyed by the row's rowid, written by the views with the rows
(see `sql.search`). Words are matched by their stem (porter), so "fox" finds "foxes".
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ....domain.errors import InvalidSearchError
from ....projections.rows import HistoryRow
from ....projections.search_text import search_text
from ....projections.views import SearchHit, SearchQuery
from ..sql.dialect import Cursor
from ..sql.schema import Tables
from ..sql.search import SearchIndex, filters

SEARCH_TABLE = "message_search"
LEGACY_TRIGGERS = ("message_history_search_insert", "message_history_search_delete")


def search_table(history: str) -> str:
    """The search index of a history table (`message_history` or one being rebuilt)."""
    return history.replace("message_history", SEARCH_TABLE)


class FTS5Index(SearchIndex):
    """The FTS5 index of a set of view tables."""

    def statements(self, tables: Tables) -> list[str]:
        return [
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {search_table(tables.message_history)} "
            "USING fts5(text, session_id UNINDEXED, message_id UNINDEXED, "
            "tokenize = 'porter unicode61')"
        ]

    def tables(self, tables: Tables) -> list[str]:
        return [search_table(tables.message_history)]

    def insert(self, c: Cursor, tables: Tables, rows: Sequence[HistoryRow]) -> None:
        """Each row under its history row's rowid, looked up first a session at a time (its
        rows of a batch have consecutive `seq`): an `INSERT … SELECT` into the FTS5 table
        costs three times as much (SQLite fills a temporary table for each)."""
        history = tables.message_history
        by_session: dict[str, list[HistoryRow]] = {}
        for row in rows:
            by_session.setdefault(row.session_id, []).append(row)
        entries = []
        for session_id, session_rows in by_session.items():
            seqs = [row.seq for row in session_rows]
            c.execute(
                f"SELECT seq, rowid FROM {history} WHERE session_id = ? AND seq BETWEEN ? AND ?",
                (session_id, min(seqs), max(seqs)),
            )
            rowids = dict(c.fetchall())
            entries.extend(
                (rowids[row.seq], search_text(row.message), session_id, row.message_id)
                for row in session_rows
            )
        c.executemany(
            f"INSERT INTO {search_table(history)} (rowid, text, session_id, message_id) "
            "VALUES (?, ?, ?, ?)",
            entries,
        )

    def erase(self, c: Cursor, tables: Tables, session_id: str) -> None:
        history = tables.message_history
        c.execute(
            f"DELETE FROM {search_table(history)} WHERE rowid IN "
            f"(SELECT rowid FROM {history} WHERE session_id = ?)",
            (session_id,),
        )

    def upgrade(self, c: Cursor) -> None:
        """Drop the triggers that fed the index before the views wrote it."""
        for trigger in LEGACY_TRIGGERS:
            c.execute(f"DROP TRIGGER IF EXISTS {trigger}")

    def search(self, cursor: Cursor, query: SearchQuery) -> list[SearchHit]:
        """Messages matching an FTS5 query, best first, with a snippet around the match."""
        conditions, parameters = filters(query, "h.active = 1")
        statement = (
            "SELECT h.session_id, h.message_id, h.role, h.active, "
            "snippet(message_search, 0, '«', '»', '…', 12) AS snippet, message_search.rank AS rank "
            "FROM message_search JOIN message_history AS h ON h.rowid = message_search.rowid "
            f"WHERE {' AND '.join(['message_search MATCH ?', *conditions])} "
            "ORDER BY message_search.rank LIMIT ?"
        )
        try:
            cursor.execute(statement, (query.text, *parameters, query.limit))
            rows = cursor.fetchall()
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "no such table" in str(error):
                raise
            raise InvalidSearchError(f"invalid search query {query.text!r}: {error}") from None
        return [
            SearchHit(row[0], row[1], row[2], bool(row[3]), " ".join(row[4].split()), row[5])
            for row in rows
        ]
