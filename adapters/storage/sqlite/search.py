"""Full-text search over every message ever stored, with SQLite FTS5.

`message_search` is an FTS5 index of the text of every `message_history` row (see
`projections.search_text`), keyed by the row's rowid, caught up from the rows when searched
(see `sql.search`). Words are matched by their stem (porter), so "fox" finds "foxes".

The index stores no copy of the text: it is an external-content table whose content is the
SQL view `message_search_text` (rowid as `id`, `text`, `session_id`, `message_id`), the
text made from each row's stored JSON by the SQL function `transcripts_search_text`, which
every connection of the store has (`register_functions`). Indexing writes only the index
(half the work of a table that kept the text too); snippets read the text through the view;
deleting an entry reads it again to find its words, so the history row must still be there,
unchanged (rows are never updated in their `message`; a change of `search_text` is a new
view version), and indexed: `erase` deletes only the rows up to the index's position.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import orjson

from ....domain.errors import InvalidSearchError
from ....projections.search_text import search_text
from ....projections.views import SearchHit, SearchQuery
from ..sql.dialect import Cursor
from ..sql.schema import LIVE, Tables
from ..sql.search import SearchIndex, filters

SEARCH_TABLE = "message_search"
CONTENT_VIEW = "message_search_text"  # not `_content`: the name of FTS5's own copy
TEXT_FUNCTION = "transcripts_search_text"
LEGACY_TRIGGERS = ("message_history_search_insert", "message_history_search_delete")
MAX_ROWID = 2**63 - 1  # above every rowid


def search_table(history: str) -> str:
    """The search index of a history table (`message_history` or one being rebuilt)."""
    return history.replace("message_history", SEARCH_TABLE)


def register_functions(connection: sqlite3.Connection) -> None:
    """Give a connection the SQL function the index's content is made with."""
    connection.create_function(TEXT_FUNCTION, 1, _text_of_json, deterministic=True)


def _text_of_json(message: str | bytes) -> str:
    return search_text(orjson.loads(message))


class FTS5Index(SearchIndex):
    """The FTS5 index of a set of view tables."""

    def statements(self, tables: Tables) -> list[str]:
        """The live index and its content view; a rebuilt index reads the live view too
        (it stays empty until swapped in, and the view then reads the rebuilt rows)."""
        index = (
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {search_table(tables.message_history)} "
            "USING fts5(text, session_id UNINDEXED, message_id UNINDEXED, "
            f"content = '{CONTENT_VIEW}', content_rowid = 'id', "
            "tokenize = 'porter unicode61')"
        )
        return [_content_view_statement(), index] if tables == LIVE else [index]

    def tables(self, tables: Tables) -> list[str]:
        return [search_table(tables.message_history)]

    def entries(self, c: Cursor, table: str) -> int:
        """One row of sizes a message indexed (counting the table would read the view)."""
        c.execute(f"SELECT COUNT(*) AS n FROM {table}_docsize")
        return int(c.fetchone()["n"])

    def index(self, c: Cursor, tables: Tables, positions: Sequence[int]) -> int:
        """Each row under its history row's rowid, in one statement. The log's order is its
        positions' here: the entries from the first position to the last are these.

        The rows are found by rowid, with no index of log positions: rows are inserted in
        the log's order (a batch after the tracked position at a time), and a new rowid is
        above every stored one, so rowids follow log positions. The rows to index are
        above the highest rowid indexed (every row indexed was inserted before every row
        not; an erasure deletes an entry with its row) and below the first row of a later
        position: a batch reads its own rows, however far the index lags behind."""
        history, index = tables.message_history, search_table(tables.message_history)
        after = f"rowid > COALESCE((SELECT MAX(id) FROM {index}_docsize), 0)"
        c.execute(
            f"INSERT INTO {index} (rowid, text) "
            f"SELECT rowid, {TEXT_FUNCTION}(message) FROM {history} WHERE {after} AND rowid < "
            f"COALESCE((SELECT rowid FROM {history} WHERE {after} AND log_position > ? "
            f"ORDER BY rowid LIMIT 1), {MAX_ROWID}) AND log_position >= ?",
            (positions[-1], positions[0]),
        )
        c.execute("SELECT changes() AS n")
        return int(c.fetchone()["n"])

    def erase(self, c: Cursor, tables: Tables, session_id: str, indexed: int) -> None:
        """Only the rows indexed: deleting one never indexed would corrupt the index."""
        history = tables.message_history
        c.execute(
            f"DELETE FROM {search_table(history)} WHERE rowid IN "
            f"(SELECT rowid FROM {history} WHERE session_id = ? AND log_position <= ?)",
            (session_id, indexed),
        )

    def before_swap(self, c: Cursor) -> None:
        """Drop the content view: renaming the rebuilt history table under it would fail."""
        c.execute(f"DROP VIEW IF EXISTS {CONTENT_VIEW}")

    def after_swap(self, c: Cursor) -> None:
        c.execute(_content_view_statement())

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


def _content_view_statement() -> str:
    return (
        f"CREATE VIEW IF NOT EXISTS {CONTENT_VIEW} AS SELECT rowid AS id, "
        f"{TEXT_FUNCTION}(message) AS text, session_id, message_id FROM {LIVE.message_history}"
    )
