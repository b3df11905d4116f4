"""Full-text search over every message ever stored, with PostgreSQL's own full-text search.

`message_search` holds the text of every `message_history` row (see
`projections.search_text`: the text SQLite indexes too) and its search vector, GIN-indexed,
caught up from the rows when searched (see `sql.search`). The vectors are stored, not
recomputed: ranking a match reads its vector. Words are matched by their stem (the
`english` configuration, so "fox" finds "foxes"; English stop words such as "the" are left
out). Snippets are `ts_headline`, ranks `-ts_rank` (lower is better).

Query syntax is `websearch_to_tsquery`'s, which never fails to parse: words (all must be
there), "quoted phrases", `OR`, `-word` (leave out), and FTS5's `NOT word`, which is read as
`-word`. A query with no word to find (empty, only punctuation or stop words, or only words
to leave out) is an `InvalidSearchError`. FTS5's `NEAR(…)`, `prefix*`, `column:` and
parentheses have no meaning here: their words are searched for as plain words.

Limits of PostgreSQL's index: a message whose index entry would pass 1 MB (about a megabyte
of distinct words) is indexed by the longest prefix that fits (halving); words of more than
2,047 characters are not indexed; phrases are exact within the first 16,383 words.
"""

from __future__ import annotations

import re

from ....domain.errors import InvalidSearchError
from ....projections.search_text import search_text
from ....projections.views import SearchHit, SearchQuery
from ..sql.dialect import Cursor
from ..sql.schema import LIVE, NEXT, Tables
from ..sql.search import SearchIndex, filters

CONFIG = "pg_catalog.english"
VECTOR_FUNCTION = "transcripts_text_vector"
SAFE_TEXT_BYTES = 100_000  # text this long cannot make a tsvector over its 1 MB limit
HEADLINE = (  # up to two fragments of 6–12 words, short words kept at their ends
    "StartSel=«, StopSel=», MaxWords=12, MinWords=6, ShortWord=0, MaxFragments=2, "
    'FragmentDelimiter=" … "'
)
SEARCH_TABLE = "message_search"
# What fed the index before the views wrote it: json-reading functions and triggers.
LEGACY = [
    "DROP TRIGGER IF EXISTS message_history_search_insert ON message_history",
    "DROP TRIGGER IF EXISTS message_history_search_delete ON message_history",
    *(
        f"DROP FUNCTION IF EXISTS {name}"
        for name in (
            "message_search_insert()",
            "message_search_delete()",
            "message_search__next_insert()",
            "message_search__next_delete()",
            "transcripts_search_vector(json)",
            "transcripts_search_text(json)",
        )
    ),
]
VECTOR_FUNCTION_STATEMENT = (  # only built-ins: it resolves under any search_path
    f"CREATE OR REPLACE FUNCTION {VECTOR_FUNCTION}(body text) RETURNS tsvector "
    "LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 1000 AS $$\n"
    "DECLARE size integer;\n"
    "BEGIN\n"
    f"  IF octet_length(body) <= {SAFE_TEXT_BYTES} THEN\n"
    f"    RETURN to_tsvector('{CONFIG}', body);\n"
    "  END IF;\n"
    "  size := length(body);\n"
    "  LOOP\n"
    "    BEGIN\n"
    f"      RETURN to_tsvector('{CONFIG}', left(body, size));\n"
    "    EXCEPTION WHEN program_limit_exceeded THEN\n"
    "      size := size / 2;\n"
    "    END;\n"
    "  END LOOP;\n"
    "END $$"
)


def search_table(history: str) -> str:
    """The search table of a history table (`message_history` or one being rebuilt)."""
    return history.replace("message_history", SEARCH_TABLE)


def index_names(history: str) -> list[str]:
    """The indexes of a history table's search table: its vectors, and its ids."""
    search = search_table(history)
    return [f"{search}_vector", f"{search}_session_id_hash", f"{search}_message_id_hash"]


class PostgresSearchIndex(SearchIndex):
    """The search table of a set of view tables."""

    def statements(self, tables: Tables) -> list[str]:
        history = tables.message_history
        search = search_table(history)
        vector, session_ids, message_ids = index_names(history)
        return [
            VECTOR_FUNCTION_STATEMENT,
            f'CREATE TABLE IF NOT EXISTS {search} (session_id text COLLATE "C" NOT NULL, '
            'message_id text COLLATE "C" NOT NULL, text text NOT NULL, '
            "vector tsvector NOT NULL)",
            f"CREATE INDEX IF NOT EXISTS {vector} ON {search} USING gin (vector)",
            f"CREATE INDEX IF NOT EXISTS {session_ids} ON {search} USING hash (session_id)",
            f"CREATE INDEX IF NOT EXISTS {message_ids} ON {search} USING hash (message_id)",
        ]

    def tables(self, tables: Tables) -> list[str]:
        return [search_table(tables.message_history)]

    def index(self, c: Cursor, tables: Tables, first: int, last: int) -> int:
        history = tables.message_history
        c.execute(
            f"SELECT session_id, message_id, message FROM {history} "
            "WHERE log_position BETWEEN ? AND ?",
            (first, last),
        )
        entries = [
            (row["session_id"], row["message_id"], search_text(row["message"]))
            for row in c.fetchall()
        ]
        c.executemany(
            f"INSERT INTO {search_table(history)} "
            f"SELECT s, m, t, {VECTOR_FUNCTION}(t) FROM (VALUES (?, ?, ?)) AS row (s, m, t)",
            entries,
        )
        return len(entries)

    def erase(self, c: Cursor, tables: Tables, session_id: str, indexed: int) -> None:
        c.execute(
            f"DELETE FROM {search_table(tables.message_history)} WHERE session_id = ?",
            (session_id,),
        )

    def after_swap(self, c: Cursor) -> None:
        """Give the rebuilt search table's indexes (swapped in with it) the live names."""
        live, rebuilt = index_names(LIVE.message_history), index_names(NEXT.message_history)
        for old, new in zip(rebuilt, live, strict=True):
            c.execute(f"ALTER INDEX IF EXISTS {old} RENAME TO {new}")

    def upgrade(self, c: Cursor) -> None:
        c.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'transcripts_search_vector') "
            "AS found"
        )
        if c.fetchone()["found"]:
            for statement in LEGACY:
                c.execute(statement)

    def search(self, cursor: Cursor, query: SearchQuery) -> list[SearchHit]:
        """Messages matching a web-search style query, best first, with a snippet of the matches."""
        text = websearch(query.text)
        cursor.execute(
            f"SELECT numnode(q) AS nodes, querytree(q) AS indexed "
            f"FROM websearch_to_tsquery('{CONFIG}', ?) AS q",
            (text,),
        )
        row = cursor.fetchone()
        if not row["nodes"]:
            raise InvalidSearchError(
                f"invalid search query {query.text!r}: no words to search for "
                "(punctuation and stop words such as 'the' are left out)"
            )
        if row["indexed"] == "T":
            raise InvalidSearchError(
                f"invalid search query {query.text!r}: only words to leave out"
            )
        if any(value is not None and "\x00" in value for value in (query.session_id, query.role)):
            return []  # no stored text holds NUL
        conditions, parameters = filters(query, "h.active")
        cursor.execute(
            "SELECT session_id, message_id, role, active, rank, "
            f"ts_headline('{CONFIG}', text, query, '{HEADLINE}') AS snippet "
            "FROM (SELECT h.session_id, h.seq, h.message_id, h.role, h.active, s.text, q.query, "
            "-ts_rank(s.vector, q.query, 1) AS rank "
            f"FROM (SELECT websearch_to_tsquery('{CONFIG}', ?) AS query) AS q, {SEARCH_TABLE} AS s "
            "JOIN message_history AS h "
            "ON h.session_id = s.session_id AND h.message_id = s.message_id "
            f"WHERE {' AND '.join(['s.vector @@ q.query', *conditions])} "
            "ORDER BY rank, h.session_id, h.seq LIMIT ?) AS best "
            "ORDER BY rank, session_id, seq",
            (text, *parameters, query.limit),
        )
        return [
            SearchHit(
                row["session_id"],
                row["message_id"],
                row["role"],
                bool(row["active"]),
                " ".join(row["snippet"].split()),
                float(row["rank"]),
            )
            for row in cursor.fetchall()
        ]


def websearch(query: str) -> str:
    """The query for `websearch_to_tsquery`: FTS5's `NOT word` (outside quotes) as `-word`,
    and NUL, which PostgreSQL text cannot hold, as a space."""
    parts = query.replace("\x00", " ").split('"')
    parts[::2] = [re.sub(r"(?<![^\s(])NOT\s+", "-", part) for part in parts[::2]]
    return '"'.join(parts)
