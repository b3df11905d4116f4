"""Full-text search over every message ever stored, with PostgreSQL's own full-text search.

`message_search` holds the search vector of every `message_history` row (GIN-indexed), fed
by triggers on `message_history` as SQLite's FTS5 table is, so it follows the view exactly
(catch-up, erasure, and rebuild with its swap) without the projector knowing. The vectors
are stored, not recomputed: ranking a match reads its vector instead of parsing the message
again. The text of a message is what SQLite indexes: its `content` (a string, or the `text` of each
part), the names and arguments of its tool calls, and its `reasoning`; words are matched by
their stem (the `english` configuration, so "fox" finds "foxes"; English stop words such as
"the" are left out). Snippets are `ts_headline`, ranks `-ts_rank` (lower is better).

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
from ....projections.views import SearchHit
from ..sql.dialect import Cursor
from ..sql.schema import LIVE, NEXT, Tables
from ..sql.search import SearchIndex

CONFIG = "pg_catalog.english"
VECTOR_FUNCTION = "transcripts_search_vector"
TEXT_FUNCTION = "transcripts_search_text"
SAFE_TEXT_BYTES = 100_000  # text this long cannot make a tsvector over its 1 MB limit
HEADLINE = (  # up to two fragments of 6–12 words, short words kept at their ends
    "StartSel=«, StopSel=», MaxWords=12, MinWords=6, ShortWord=0, MaxFragments=2, "
    'FragmentDelimiter=" … "'
)

# The searchable text of a json `message`. `->>` refuses a `\u0000` escape, so a message
# holding one is read without them: escaped backslashes are spelled `\u005c` first, so that
# every `\u0000` left is a real escape of NUL.
_TEXT = r"""(SELECT concat_ws(' ',
    CASE json_typeof(m->'content')
        WHEN 'string' THEN m->>'content'
        WHEN 'array' THEN (SELECT string_agg(COALESCE(part->>'text', ''), ' ')
                           FROM json_array_elements(m->'content') AS part)
    END,
    CASE WHEN json_typeof(m->'tool_calls') = 'array' THEN (
        SELECT string_agg(concat_ws(' ', call->'function'->>'name',
                                    call->'function'->>'arguments'), ' ')
        FROM json_array_elements(m->'tool_calls') AS call)
    END,
    m->>'reasoning')
FROM (SELECT CASE WHEN strpos(message::text, '\u0000') > 0
        THEN replace(replace(message::text, '\\', '\u005c'), '\u0000', '')::json
        ELSE message END AS m) AS cleaned)"""


def function_statements() -> list[str]:
    """The functions the index and the queries call (self-contained: only built-ins, which
    resolve under any search_path, as in maintenance commands)."""
    return [
        f"CREATE OR REPLACE FUNCTION {TEXT_FUNCTION}(message json) RETURNS text "
        f"LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 500 AS $$ SELECT {_TEXT} $$",
        f"CREATE OR REPLACE FUNCTION {VECTOR_FUNCTION}(message json) RETURNS tsvector "
        "LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL RESTRICTED COST 1000 AS $$\n"
        f"DECLARE body text := {_TEXT}; size integer;\n"
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
        "END $$",
    ]


SEARCH_TABLE = "message_search"


def search_table(history: str) -> str:
    """The search table of a history table (`message_history` or one being rebuilt)."""
    return history.replace("message_history", SEARCH_TABLE)


def index_name(history: str) -> str:
    return f"{search_table(history)}_vector"


def table_statements(history: str) -> list[str]:
    """The search table of a history table and its index (see `trigger_statements`)."""
    search = search_table(history)
    return [
        f'CREATE TABLE IF NOT EXISTS {search} (session_id text COLLATE "C" NOT NULL, '
        'message_id text COLLATE "C" NOT NULL, vector tsvector NOT NULL, '
        "PRIMARY KEY (session_id, message_id))",
        f"CREATE INDEX IF NOT EXISTS {index_name(history)} ON {search} USING gin (vector)",
    ]


def trigger_statements(history: str) -> list[str]:
    """The functions and triggers that index every row a history table gains, and drop
    what it loses (static SQL, one function per table: plans are cached)."""
    search = search_table(history)
    return [
        f"CREATE OR REPLACE FUNCTION {search}_insert() RETURNS trigger LANGUAGE plpgsql AS $$ "
        f"BEGIN INSERT INTO {search} (session_id, message_id, vector) VALUES "
        f"(NEW.session_id, NEW.message_id, {VECTOR_FUNCTION}(NEW.message)); RETURN NULL; END $$",
        f"CREATE OR REPLACE FUNCTION {search}_delete() RETURNS trigger LANGUAGE plpgsql AS $$ "
        f"BEGIN DELETE FROM {search} WHERE session_id = OLD.session_id "
        "AND message_id = OLD.message_id; RETURN NULL; END $$",
        f"CREATE OR REPLACE TRIGGER {history}_search_insert AFTER INSERT ON {history} "
        f"FOR EACH ROW EXECUTE FUNCTION {search}_insert()",
        f"CREATE OR REPLACE TRIGGER {history}_search_delete AFTER DELETE ON {history} "
        f"FOR EACH ROW EXECUTE FUNCTION {search}_delete()",
    ]


def drop_trigger_statements(history: str) -> list[str]:
    return [
        f"DROP TRIGGER IF EXISTS {history}_search_{action} ON {history}"
        for action in ("insert", "delete")
    ]


def rename_index_statements(rebuilt: str, live: str) -> list[str]:
    """Give a rebuilt search table's index (swapped in with it) the live index's name."""
    return [f"ALTER INDEX IF EXISTS {index_name(rebuilt)} RENAME TO {index_name(live)}"]


def backfill_statement(history: str) -> str:
    """Index the rows a history table holds already (a store made before search existed)."""
    return (
        f"INSERT INTO {search_table(history)} (session_id, message_id, vector) "
        f"SELECT session_id, message_id, {VECTOR_FUNCTION}(message) FROM {history} "
        "ON CONFLICT DO NOTHING"
    )


class PostgresSearchIndex(SearchIndex):
    """The search table of a set of view tables, and its functions and triggers."""

    def statements(self, tables: Tables) -> list[str]:
        # The functions are made with the live tables (a rebuild finds them there).
        functions = function_statements() if tables is LIVE else []
        history = tables.message_history
        return [*functions, *table_statements(history), *trigger_statements(history)]

    def tables(self, tables: Tables) -> list[str]:
        return [search_table(tables.message_history)]

    def before_swap(self, c: Cursor) -> None:
        for statement in drop_trigger_statements(NEXT.message_history):
            c.execute(statement)

    def after_swap(self, c: Cursor) -> None:
        history = LIVE.message_history
        for statement in [
            *rename_index_statements(NEXT.message_history, history),
            *trigger_statements(history),
        ]:
            c.execute(statement)

    def upgrade(self, c: Cursor) -> None:
        """Give a store made before full-text search existed its search table, filled."""
        c.execute("SELECT to_regclass(?) IS NOT NULL AS found", (SEARCH_TABLE,))
        if not c.fetchone()["found"]:
            for statement in self.statements(LIVE):
                c.execute(statement)
            c.execute(backfill_statement(LIVE.message_history))

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
        """Messages matching a web-search style query, best first, with a snippet of the matches."""
        text = websearch(query)
        cursor.execute(
            f"SELECT numnode(q) AS nodes, querytree(q) AS indexed "
            f"FROM websearch_to_tsquery('{CONFIG}', ?) AS q",
            (text,),
        )
        row = cursor.fetchone()
        if not row["nodes"]:
            raise InvalidSearchError(
                f"invalid search query {query!r}: no words to search for "
                "(punctuation and stop words such as 'the' are left out)"
            )
        if row["indexed"] == "T":
            raise InvalidSearchError(f"invalid search query {query!r}: only words to leave out")
        if any(value is not None and "\x00" in value for value in (session_id, role)):
            return []  # no stored text holds NUL
        conditions = ["s.vector @@ q.query"]
        parameters: list[object] = [text]
        for column, value in (("h.session_id", session_id), ("h.role", role)):
            if value is not None:
                conditions.append(f"{column} = ?")
                parameters.append(value)
        if active_only:
            conditions.append("h.active")
        cursor.execute(
            "SELECT session_id, message_id, role, active, rank, "
            f"ts_headline('{CONFIG}', {TEXT_FUNCTION}(message), query, '{HEADLINE}') AS snippet "
            "FROM (SELECT h.session_id, h.seq, h.message_id, h.role, h.active, h.message, q.query, "
            "-ts_rank(s.vector, q.query, 1) AS rank "
            f"FROM (SELECT websearch_to_tsquery('{CONFIG}', ?) AS query) AS q, {SEARCH_TABLE} AS s "
            "JOIN message_history AS h "
            "ON h.session_id = s.session_id AND h.message_id = s.message_id "
            f"WHERE {' AND '.join(conditions)} ORDER BY rank, h.session_id, h.seq LIMIT ?) AS best "
            "ORDER BY rank, session_id, seq",
            (*parameters, limit),
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
