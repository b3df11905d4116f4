"""Full-text search over every message ever stored, with SQLite FTS5.

`message_search` is an FTS5 table of the text of every `message_history` row (see
`projections.search_text`), keyed by the row's rowid, caught up from the rows when searched
(see `sql.search`). Words are matched by their stem (porter), so "fox" finds "foxes".
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import orjson

from ....domain.errors import InvalidSearchError
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

    def index(self, c: Cursor, tables: Tables, positions: Sequence[int]) -> int:
        """Each row under its history row's rowid. The log's order is its positions' here:
        the entries from the first position to the last are these."""
        history = tables.message_history
        c.execute(
            f"SELECT rowid, session_id, message_id, message FROM {history} "
            "WHERE log_position BETWEEN ? AND ?",
            (positions[0], positions[-1]),
        )
        entries = [
            (rowid, search_text(orjson.loads(message)), session_id, message_id)
            for rowid, session_id, message_id, message in c.fetchall()
        ]
        c.executemany(
            f"INSERT INTO {search_table(history)} (rowid, text, session_id, message_id) "
            "VALUES (?, ?, ?, ?)",
            entries,
        )
        return len(entries)

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
