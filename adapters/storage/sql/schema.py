"""The schema of the read models: the names of a set of view tables (live, or being rebuilt)
and the one set of tables every SQL dialect creates, in the dialect's column types."""

from __future__ import annotations

from dataclasses import dataclass

from ....projections.rows import VIEW_NAMES
from ..sealing import SETTINGS_TABLE

REBUILD_SUFFIX = "__next"
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
        return [view + self.suffix for view in (*VIEW_NAMES, QUARANTINE)]


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
    # Whether ids are looked up through hash indexes rather than keys: a btree index entry
    # (a key's) cannot hold ids of MAX_ID_LENGTH characters of any text on every database.
    hashed_ids: bool = False

    def create_statements(self, tables: Tables) -> list[str]:
        """The view tables, then the indexes of their ids (where they are not keys)."""
        t, long, i, b, j, at = (
            self.text,
            self.long_text,
            self.integer,
            self.boolean,
            self.json,
            self.time,
        )
        keyed = not self.hashed_ids
        session_key = " PRIMARY KEY" if keyed else " NOT NULL"
        active_keys = (
            ", PRIMARY KEY (session_id, position), UNIQUE (session_id, message_id)" if keyed else ""
        )
        history_keys = (
            ", PRIMARY KEY (session_id, seq), UNIQUE (session_id, message_id)" if keyed else ""
        )
        attempt_keys = ", UNIQUE (session_id, version)" if keyed else ""
        return [
            f"CREATE TABLE IF NOT EXISTS {tables.sessions} ("
            f"session_id {t}{session_key}, transcript_id {t} NOT NULL UNIQUE, "
            f"source {t} NOT NULL, model {t}, parent_id {t}, metadata {j} NOT NULL, "
            f"started_at {at} NOT NULL, last_event_at {at} NOT NULL, version {i} NOT NULL, "
            f"message_count {i} NOT NULL, active_count {i} NOT NULL, "
            f"compactions_committed {i} NOT NULL, compactions_failed {i} NOT NULL, "
            f"quarantined {i} NOT NULL, erased_at {at}, rewound_count {i} NOT NULL)",
            f"CREATE TABLE IF NOT EXISTS {tables.active_messages} ("
            f"session_id {t} NOT NULL, position {i} NOT NULL, message_id {t} NOT NULL, "
            f"role {t} NOT NULL, message {j} NOT NULL{active_keys})",
            f"CREATE TABLE IF NOT EXISTS {tables.message_history} ("
            f"session_id {t} NOT NULL, seq {i} NOT NULL, message_id {t} NOT NULL, "
            f"role {t} NOT NULL, message {j} NOT NULL, active {b} NOT NULL, "
            f"superseded_by {t}, added_by {t}, appended_at {at} NOT NULL, "
            f"appended_version {i} NOT NULL, rewound_version {i}, restored_version {i}"
            f"{history_keys})",
            f"CREATE TABLE IF NOT EXISTS {tables.compaction_attempts} ("
            f"compaction_id {t} PRIMARY KEY, session_id {t} NOT NULL, version {i} NOT NULL, "
            f"status {t} NOT NULL, reason {long} NOT NULL, failure {t}, error {long}, "
            f"based_on_version {i} NOT NULL, superseded_count {i} NOT NULL, "
            f"added_count {i} NOT NULL, superseded_ids {j} NOT NULL, added_ids {j} NOT NULL, "
            f"tokens_before {i}, tokens_after {i}, at {at} NOT NULL{attempt_keys})",
            f"CREATE TABLE IF NOT EXISTS {tables.quarantined_events} ("
            f"position {i} PRIMARY KEY, transcript_id {t} NOT NULL, session_id {t}, "
            f"version {i} NOT NULL, topic {long} NOT NULL, reason {long} NOT NULL)",
            *self.id_index_statements(tables),
        ]

    def id_index_statements(self, tables: Tables) -> list[str]:
        """The hash indexes of the id columns (none where ids are keys)."""
        if not self.hashed_ids:
            return []
        return [
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING hash ({column})"
            for name, table, column in self.id_indexes(tables)
        ]

    def id_indexes(self, tables: Tables) -> list[tuple[str, str, str]]:
        """(index, table, column) of each hash index of an id column."""
        if not self.hashed_ids:
            return []
        columns = {
            tables.sessions: ["session_id"],
            tables.active_messages: ["session_id", "message_id"],
            tables.message_history: ["session_id", "message_id"],
            tables.compaction_attempts: ["session_id"],
        }
        return [
            (f"{table}_{column}_hash", table, column)
            for table, names in columns.items()
            for column in names
        ]

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
