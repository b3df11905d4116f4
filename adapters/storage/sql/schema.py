"""The schema of the read models: the names of a set of view tables (live, or being rebuilt)
and the one set of tables every SQL dialect creates, in the dialect's column types."""

from __future__ import annotations

from dataclasses import dataclass

from ....projections.rows import VIEW_NAMES
from ..sealing import SETTINGS_TABLE

REBUILD_SUFFIX = "__next"
ACTIVE_VIEW = "active_messages"  # an SQL view: the history rows above the position base
QUARANTINE = "quarantined_events"
VERSIONS_TABLE = "view_versions"


@dataclass(frozen=True)
class Tables:
    """Names of one set of view tables: the live ones, or a set being rebuilt."""

    suffix: str = ""

    def __getattr__(self, view: str) -> str:
        if view not in (*VIEW_NAMES, QUARANTINE):
            raise AttributeError(view)
        return view + self.suffix

    def names(self) -> list[str]:
        """The tables of the set: every view but `active_messages`, an SQL view of
        `message_history`, and the quarantine."""
        return [view + self.suffix for view in (*VIEW_NAMES, QUARANTINE) if view != ACTIVE_VIEW]


LIVE = Tables()
NEXT = Tables(REBUILD_SUFFIX)


@dataclass(frozen=True)
class ColumnTypes:
    """The SQL types of a dialect, for the one schema every dialect creates."""

    text: str  # short text, compared and sorted by its bytes (ids, roles)
    long_text: str  # free text (reasons, errors)
    integer: str
    boolean: str
    json: str
    time: str
    # An SQL function of an id, of a fixed size, where a key cannot hold ids of MAX_ID_LENGTH
    # characters of any text (a btree index entry's limit): ids are then looked up through
    # hash indexes and made unique by keys on their digests. None: ids are keys themselves.
    id_digest: str | None = None
    # The statements (idempotent) creating the SQL functions the schema uses: `id_digest`.
    functions: tuple[str, ...] = ()
    # An SQL aggregate of the `ids` column of rows into a JSON array, in `order` (SQLite's
    # keeps the order of the ordered subquery it reads; it has no ORDER BY in aggregates).
    id_array: str = "json_group_array({ids})"
    # An SQL aggregate of JSON texts (`texts`, one JSON value each) into a JSON array of
    # them (its text, or its bytes), in the order of the ordered subquery it reads; None:
    # read them a row at a time (where the driver decodes JSON itself).
    json_text_array: str | None = None
    # The SQL function making a JSON array of its arguments.
    json_array: str = "json_array"
    # Storage options of message_history, whose rows a compaction, a rewind or a restore
    # update (a flag and a compaction id): room on their pages makes those updates in place.
    history_storage: str = ""
    # How an SQL view is created where it may exist already (PostgreSQL: OR REPLACE).
    create_view: str = "CREATE VIEW IF NOT EXISTS"

    def session_match(self, column: str = "session_id") -> str:
        """A condition matching one session (`session_params`) through the unique keys: by
        its id, and where ids are not keys by their digests too, so that the keys' indexes
        serve it (the order of `active_messages` among them) whatever the statistics say."""
        if self.id_digest is None:
            return f"{column} = ?"
        return f"{column} = ? AND {self.id_digest}({column}) = {self.id_digest}(?)"

    def active_rows(self, tables: Tables, columns: str) -> str:
        """A SELECT of the `columns` of a session's active `message_history` rows (`h`) after
        an `active_messages` position (`active_params`): the rows above the session's
        position base, through the position key, its range named (without statistics SQLite
        may take another key of the session and sort its whole history). Order by
        `h.position`, the key's order. One look-up of the base: a read of the whole context
        that needs no `active_messages` positions takes `h.position`, which orders alike."""
        return (
            f"SELECT {columns} FROM {tables.message_history} AS h WHERE "
            f"{self.session_match('h.session_id')} AND h.position > {self._base(tables)} + ?"
        )

    def readable_active_rows(self, tables: Tables, columns: str, condition: str) -> str:
        """`active_rows` (of the same parameters, then `condition`'s) while `condition`
        holds, of a session the views can answer for (it is there, not erased, none of its
        events quarantined); no rows otherwise: the base is then NULL."""
        readable_base = (
            f"(SELECT position_base FROM {tables.sessions} WHERE session_id = ? "
            "AND erased_at IS NULL AND quarantined = 0)"
        )
        return (
            f"SELECT {columns} FROM {tables.message_history} AS h WHERE "
            f"{self.session_match('h.session_id')} AND h.position > {readable_base} + ? "
            f"AND {condition}"
        )

    def active_positions(self, tables: Tables, columns: str, name: str = "position") -> str:
        """`active_rows`, their `active_messages` positions first (named `name`): one
        parameter more, first, the session id."""
        return self.active_rows(tables, f"h.position - {self._base(tables)} AS {name}, {columns}")

    def active_params(self, session_id: str, after: int = 0) -> tuple[str | int, ...]:
        """The parameters of `active_rows`: the rows after position `after`."""
        return (*self.session_params(session_id), session_id, after)

    @staticmethod
    def _base(tables: Tables) -> str:
        """The session's position base (a row of no session: 0), of one parameter."""
        return f"COALESCE((SELECT position_base FROM {tables.sessions} WHERE session_id = ?), 0)"

    def session_params(self, session_id: str) -> tuple[str, ...]:
        """The parameters of `session_match`."""
        return (session_id,) if self.id_digest is None else (session_id, session_id)

    def create_statements(self, tables: Tables) -> list[str]:
        """The functions the schema uses, the view tables, the indexes of their ids (where
        they are not keys), then `active_messages`: what a new store and a rebuild create."""
        t, long, i, b, j, at = (
            self.text,
            self.long_text,
            self.integer,
            self.boolean,
            self.json,
            self.time,
        )
        keyed = self.id_digest is None
        session_key = " PRIMARY KEY" if keyed else " NOT NULL"
        # NULL positions (messages not active) are distinct. No key of log positions here:
        # rows are inserted in the log's order, so their rowids are in it too (SQLite's
        # search catch-up finds them so), and an index would cost every append a page.
        history_keys = (
            ", PRIMARY KEY (session_id, seq), UNIQUE (session_id, message_id), "
            "UNIQUE (session_id, position)"
            if keyed
            else ""
        )
        attempt_keys = ", UNIQUE (session_id, version)" if keyed else ""
        return [
            *self.functions,
            f"CREATE TABLE IF NOT EXISTS {tables.sessions} ("
            f"session_id {t}{session_key}, transcript_id {t} NOT NULL UNIQUE, "
            f"source {t} NOT NULL, model {t}, parent_id {t}, metadata {j} NOT NULL, "
            f"started_at {at} NOT NULL, last_event_at {at} NOT NULL, version {i} NOT NULL, "
            f"message_count {i} NOT NULL, active_count {i} NOT NULL, "
            f"compactions_committed {i} NOT NULL, compactions_failed {i} NOT NULL, "
            f"quarantined {i} NOT NULL, erased_at {at}, rewound_count {i} NOT NULL, "
            f"state {j} NOT NULL, context_version {i} NOT NULL, position_base {i} NOT NULL)",
            f"CREATE TABLE IF NOT EXISTS {tables.message_history} ("
            f"session_id {t} NOT NULL, seq {i} NOT NULL, message_id {t} NOT NULL, "
            f"role {t} NOT NULL, message {j} NOT NULL, active {b} NOT NULL, "
            f"superseded_by {t}, added_by {t}, appended_at {at} NOT NULL, "
            f"appended_version {i} NOT NULL, rewound_version {i}, restored_version {i}, "
            f"position {i}, log_position {i} NOT NULL{history_keys}){self.history_storage}",
            f"CREATE TABLE IF NOT EXISTS {tables.compaction_attempts} ("
            f"compaction_id {t} PRIMARY KEY, session_id {t} NOT NULL, version {i} NOT NULL, "
            f"status {t} NOT NULL, reason {long} NOT NULL, failure {t}, error {long}, "
            f"based_on_version {i} NOT NULL, superseded_count {i} NOT NULL, "
            f"added_count {i} NOT NULL, superseded_ids {j} NOT NULL, added_ids {j} NOT NULL, "
            f"tokens_before {i}, tokens_after {i}, at {at} NOT NULL, metadata {j}{attempt_keys})",
            f"CREATE TABLE IF NOT EXISTS {tables.quarantined_events} ("
            f"position {i} PRIMARY KEY, transcript_id {t} NOT NULL, session_id {t}, "
            f"version {i} NOT NULL, topic {long} NOT NULL, reason {long} NOT NULL)",
            *self.id_index_statements(tables),
            self.active_view_statement(tables),
        ]

    def active_view_statement(self, tables: Tables) -> str:
        """`active_messages`: each active message's history row, above its session's
        position base, at its position less the base (1, 2, …; a row of no session: as it
        is, so that verify_projections sees it)."""
        return (
            f"{self.create_view} {tables.active_messages} AS SELECT h.session_id, "
            "h.position - COALESCE(s.position_base, 0) AS position, h.message_id, h.role, "
            f"h.message FROM {tables.message_history} AS h LEFT JOIN {tables.sessions} AS s "
            "ON s.session_id = h.session_id WHERE h.position > COALESCE(s.position_base, 0)"
        )

    def id_index_statements(self, tables: Tables) -> list[str]:
        """The indexes of the id columns where ids are not keys (none where they are)."""
        return [statement for _, _, statement in self.id_indexes(tables)]

    def id_indexes(self, tables: Tables) -> list[tuple[str, str, str]]:
        """(index, table, statement creating it) of each index of the id columns where ids
        are not keys: a hash index per id column to find them, and unique keys on the ids'
        digests where ids are keys elsewhere (and the key of the rows' log positions, which
        the search index catches up by). `message_history` is found by session through
        its keys (`session_match`): a hash index of a column holding one value on 100,000
        rows costs every insert a walk along the value's chain of pages."""
        if self.id_digest is None:
            return []
        session, message = (
            f"{self.id_digest}({column})" for column in ("session_id", "message_id")
        )
        active = "position IS NOT NULL"
        indexes = [  # (table, name, unique, what it indexes, of which rows)
            (tables.sessions, "session_id_hash", False, "session_id", None),
            (tables.sessions, "session_key", True, session, None),
            (tables.message_history, "message_id_hash", False, "message_id", None),
            (tables.message_history, "seq_key", True, f"{session}, seq", None),
            (tables.message_history, "message_key", True, f"{session}, {message}", None),
            (tables.message_history, "position_key", True, f"{session}, position", active),
            (tables.message_history, "log_position_key", True, "log_position, seq", None),
            (tables.compaction_attempts, "session_id_hash", False, "session_id", None),
            (tables.compaction_attempts, "version_key", True, f"{session}, version", None),
        ]
        return [
            (
                f"{table}_{name}",
                table,
                _index_statement(f"{table}_{name}", table, unique, what, rows),
            )
            for table, name, unique, what, rows in indexes
        ]

    def retired_indexes(self, tables: Tables) -> list[str]:
        """Indexes of the id columns earlier releases made and this one does not: a rebuild
        lets them go with their tables rather than keep them as users' indexes."""
        if self.id_digest is None:
            return []
        return [f"{tables.message_history}_session_id_hash"]  # while active_messages was a table

    def versions_statement(self) -> str:
        return (
            f"CREATE TABLE IF NOT EXISTS {VERSIONS_TABLE} "
            f"(view {self.text} PRIMARY KEY, version {self.integer} NOT NULL)"
        )

    def settings_statement(self) -> str:
        return (
            f"CREATE TABLE IF NOT EXISTS {SETTINGS_TABLE} "
            f"(name {self.text} PRIMARY KEY, value {self.long_text} NOT NULL)"
        )


def _index_statement(name: str, table: str, unique: bool, what: str, rows: str | None) -> str:
    """A unique (btree) index, or a hash index to look values up; `rows`: of the rows
    matching it only."""
    where = f" WHERE {rows}" if rows else ""
    if unique:
        return f"CREATE UNIQUE INDEX IF NOT EXISTS {name} ON {table} ({what}){where}"
    return f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING hash ({what}){where}"
