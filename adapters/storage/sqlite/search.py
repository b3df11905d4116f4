"""Full-text search over every message ever stored, with SQLite FTS5.

`message_search` is an FTS5 table fed by triggers on `message_history`, so it follows the
view exactly (catch-up, and rebuild with its swap) without the projector knowing. The
text of a message is its `content` (a string, or the `text` of each part), the names and
arguments of its tool calls, and its `reasoning` when present; words are matched by their
stem (porter), so "fox" finds "foxes".
"""

from __future__ import annotations

import sqlite3

from ....domain.errors import InvalidSearchError
from ....projections.views import SearchHit
from ..sql.dialect import Cursor
from ..sql.schema import LIVE, NEXT, Tables
from ..sql.search import SearchIndex

_TEXT = """
    COALESCE(CASE json_type({row}.message, '$.content')
        WHEN 'text' THEN json_extract({row}.message, '$.content')
        WHEN 'array' THEN (
            SELECT group_concat(COALESCE(json_extract(part.value, '$.text'), ''), ' ')
            FROM json_each({row}.message, '$.content') AS part)
    END, '')
    || ' ' || COALESCE((
        SELECT group_concat(
            COALESCE(json_extract(call.value, '$.function.name'), '') || ' ' ||
            COALESCE(json_extract(call.value, '$.function.arguments'), ''), ' ')
        FROM json_each({row}.message, '$.tool_calls') AS call), '')
    || ' ' || COALESCE(json_extract({row}.message, '$.reasoning'), '')
"""


SEARCH_TABLE = "message_search"


def search_table(history: str) -> str:
    """The search index of a history table (`message_history` or one being rebuilt)."""
    return history.replace("message_history", SEARCH_TABLE)


def index_statements(history: str) -> list[str]:
    """The FTS table of a history table: the table only (see `trigger_statements`)."""
    return [
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {search_table(history)} USING fts5("
        "text, session_id UNINDEXED, message_id UNINDEXED, tokenize = 'porter unicode61')"
    ]


def trigger_statements(history: str) -> list[str]:
    """The triggers that index every row a history table gains, and drop what it loses."""
    search = search_table(history)
    return [
        f"CREATE TRIGGER IF NOT EXISTS {history}_search_insert AFTER INSERT ON {history} BEGIN "
        f"INSERT INTO {search} (rowid, text, session_id, message_id) "
        f"VALUES (new.rowid, {_TEXT.format(row='new')}, new.session_id, new.message_id); END",
        f"CREATE TRIGGER IF NOT EXISTS {history}_search_delete AFTER DELETE ON {history} BEGIN "
        f"DELETE FROM {search} WHERE rowid = old.rowid; END",
    ]


def drop_trigger_statements(history: str) -> list[str]:
    return [f"DROP TRIGGER IF EXISTS {history}_search_{action}" for action in ("insert", "delete")]


class FTS5Index(SearchIndex):
    """The FTS5 index of a set of view tables."""

    def statements(self, tables: Tables) -> list[str]:
        history = tables.message_history
        return [*index_statements(history), *trigger_statements(history)]

    def tables(self, tables: Tables) -> list[str]:
        return [search_table(tables.message_history)]

    def before_swap(self, c: Cursor) -> None:
        for statement in drop_trigger_statements(NEXT.message_history):
            c.execute(statement)

    def after_swap(self, c: Cursor) -> None:
        for statement in trigger_statements(LIVE.message_history):
            c.execute(statement)

    def search(
        self,
        cursor: Cursor,
        query: str,
        *,
        session_id: str | None,
        role: str | None,
        active_only: bool,
        limit: int,
    ) -> list[SearchHit]:
        """Messages matching an FTS5 query, best first, with a snippet around the match."""
        conditions = ["message_search MATCH ?"]
        parameters: list[object] = [query]
        for column, value in (("h.session_id", session_id), ("h.role", role)):
            if value is not None:
                conditions.append(f"{column} = ?")
                parameters.append(value)
        if active_only:
            conditions.append("h.active = 1")
        statement = (
            "SELECT h.session_id, h.message_id, h.role, h.active, "
            "snippet(message_search, 0, '«', '»', '…', 12) AS snippet, message_search.rank AS rank "
            "FROM message_search JOIN message_history AS h ON h.rowid = message_search.rowid "
            f"WHERE {' AND '.join(conditions)} ORDER BY message_search.rank LIMIT ?"
        )
        try:
            cursor.execute(statement, (*parameters, limit))
            rows = cursor.fetchall()
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "no such table" in str(error):
                raise
            raise InvalidSearchError(f"invalid search query {query!r}: {error}") from None
        return [
            SearchHit(row[0], row[1], row[2], bool(row[3]), " ".join(row[4].split()), row[5])
            for row in rows
        ]
