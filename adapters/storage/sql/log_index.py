"""The write side's index of message ids (`domain.id_index`) in SQL, beside the log.

A table that the log's write transactions keep, with the events they store (no view: a
rebuild of the views leaves it as it is):
- `log_message_ids`: stream_id, id_key (`domain.id_index.id_key`: the id's UTF-8 bytes, a
  long id's first 64 followed by their SHA-256, so that time-ordered ids are added at the
  end of the table's B-tree), content_hash (the SHA-256 the log stores for the id's
  content, sealed with the log's cipher on an encrypted store), rewound. And one row more
  per stream, under the key `VERSION_KEY` (the byte 0xFF, which no id's key is and which
  sorts after every one): its content_hash is the version of the stream the index reflects
  (8 bytes, big-endian, not sealed). Time-ordered ids are added beside it, so a write
  changes one page of the table, not one of it and one of another table.
- `log_streams`: stream_id, version — where the release before kept the version; read when
  a stream has no version row yet (its first write by this release adds one).
The `store_settings` row `message_id_keys` names the version of the keys (`KEY_VERSION`):
a store whose index has other keys (a release before, which recorded none) drops its index
once on open, under the write lock, and each session's next write indexes it anew from its
log. Ids are not sealed on an encrypted store: the views hold them readable too.
And a partial index of the log itself, `<events table>_unknown_topics_<digest>`: the events
whose topic this release does not store (a newer release's, or damaged). It holds no entry
unless there are such events, so a write finds one in its session with a look-up. Its
condition is `topic NOT IN (…)`, or where `chained_topics` a chain of `topic <> …` (the
index then named with `_chained`): SQLite builds a NOT IN list's look-up table again for
every row an `executemany` inserts (2.4 µs an event), a chain of comparisons costs none.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Cipher

from ....domain.id_index import KEY_VERSION, IndexChanges, IndexEntry, IndexState, id_key
from ....domain.transcript import Transcript
from ..sealing import SETTINGS_TABLE

# Every topic this release stores and reads: an event of any other topic cannot be read (a
# newer release's, or damaged).
STORED_TOPICS = tuple(
    event.TOPIC
    for event in (
        Transcript.Started,
        Transcript.MessageAppended,
        Transcript.CompactionCommitted,
        Transcript.CompactionFailed,
        Transcript.Rewound,
        Transcript.StateChanged,
        Transcript.Erased,
    )
)
STREAMS = "log_streams"  # the release before's versions: read, never written
MESSAGE_IDS = "log_message_ids"
VERSION_KEY = b"\xff"  # the key of a stream's version row: after every id's (UTF-8) key
KEY_SETTING = "message_id_keys"  # its value: the `KEY_VERSION` of the index's keys
IDS_PER_QUERY = 500  # well under every backend's limit of parameters
KEYS_PER_PAGE = 1_000  # id keys read at a time when a stream's index is read in order
_TOPICS_DIGEST = hashlib.sha256(" ".join(sorted(STORED_TOPICS)).encode()).hexdigest()[:8]


@dataclass(frozen=True)
class IndexTypes:
    """A database's column types for the index tables."""

    stream: str  # the log's type of originator ids
    digest: str  # 32 bytes (more when sealed)
    integer: str
    boolean: str
    table_options: str = ""  # SQLite: WITHOUT ROWID (the key is the row)


@dataclass(frozen=True)
class StoredIndex:
    """One stream's index as stored, read by look-ups on a cursor whose transaction is one
    snapshot (`application.storage.IndexReads`)."""

    index: LogIndex
    cursor: Any
    stream_id: UUID

    def version(self) -> int | None:
        return self.index.version(self.cursor, self.stream_id)

    def entries(self, message_ids: Sequence[str]) -> dict[str, IndexEntry]:
        return self.index.entries(self.cursor, self.stream_id, message_ids)

    def count(self) -> int:
        return self.index.count(self.cursor, self.stream_id)

    def keys(self) -> Iterator[bytes]:
        return self.index.keys(self.cursor, self.stream_id)


class LogIndex:
    """The index's statements on one store's log (`?` placeholders: `param` in their place)."""

    def __init__(
        self,
        events_table: str,
        *,
        stream_key: Callable[[UUID], Any],
        flag: Callable[[bool], Any],
        cipher: Cipher | None,
        param: str = "?",
        chained_topics: bool = False,
    ) -> None:
        self.events_table = events_table
        self.stream_key = stream_key  # a stream id as the log stores it
        self.flag = flag
        self.cipher = cipher
        topics = [repr(topic) for topic in STORED_TOPICS]
        self.unknown_topics = (
            " AND ".join(f"topic <> {topic}" for topic in topics)
            if chained_topics
            else f"topic NOT IN ({', '.join(topics)})"
        )
        self.topics_prefix = f"{events_table}_unknown_topics_"  # of every release's index
        chained = "_chained" if chained_topics else ""
        self.topics_index = f"{self.topics_prefix}{_TOPICS_DIGEST}{chained}"
        self._param = param
        self._version_row = (
            f"SELECT content_hash FROM {MESSAGE_IDS} WHERE stream_id = ? AND id_key = ?"
        )
        self._state = self._sql(
            f"SELECT ({self._version_row}) AS indexed, "
            f"(SELECT version FROM {STREAMS} WHERE stream_id = ?) AS indexed_before, "
            f"(SELECT MIN(originator_version) FROM {events_table} "
            f"WHERE originator_id = ? AND {self.unknown_topics}) AS unreadable"
        )
        self._upsert = self._sql(
            f"INSERT INTO {MESSAGE_IDS} VALUES (?, ?, ?, ?) ON CONFLICT (stream_id, id_key) "
            "DO UPDATE SET content_hash = excluded.content_hash, rewound = excluded.rewound"
        )
        self._mark = self._sql(
            f"UPDATE {MESSAGE_IDS} SET rewound = ? WHERE stream_id = ? AND id_key = ?"
        )
        self._drop = self._sql(f"DELETE FROM {MESSAGE_IDS} WHERE stream_id = ?")

    def create_statements(self, types: IndexTypes) -> list[str]:
        return [
            f"CREATE TABLE IF NOT EXISTS {STREAMS} (stream_id {types.stream} PRIMARY KEY, "
            f"version {types.integer} NOT NULL){types.table_options}",
            f"CREATE TABLE IF NOT EXISTS {MESSAGE_IDS} (stream_id {types.stream} NOT NULL, "
            f"id_key {types.digest} NOT NULL, content_hash {types.digest} NOT NULL, "
            f"rewound {types.boolean} NOT NULL, PRIMARY KEY (stream_id, id_key))"
            f"{types.table_options}",
            f"CREATE INDEX IF NOT EXISTS {self.topics_index} ON {self.events_table} "
            f"(originator_id, originator_version) WHERE {self.unknown_topics}",
        ]

    def names(self) -> list[str]:
        """The tables and the index it creates."""
        return [STREAMS, MESSAGE_IDS, self.topics_index]

    def state_statement(self, stream_id: UUID) -> tuple[str, tuple[Any, ...]]:
        """The statement reading the stream's `IndexState`, and its parameters."""
        key = self.stream_key(stream_id)
        return self._state, (key, VERSION_KEY, key, key)

    @staticmethod
    def state_of(cursor: Any) -> IndexState:
        """The `IndexState` a cursor read with `state_statement`."""
        return state_in(cursor.fetchone())

    def entries(
        self, cursor: Any, stream_id: UUID, message_ids: Sequence[str]
    ) -> dict[str, IndexEntry]:
        """The entries of these ids the stream has (each id it never stored is left out)."""
        key, by_digest = self.stream_key(stream_id), {id_key(i): i for i in message_ids}
        digests = list(by_digest)
        found: dict[str, IndexEntry] = {}
        for start in range(0, len(digests), IDS_PER_QUERY):
            chunk = digests[start : start + IDS_PER_QUERY]
            cursor.execute(
                self._sql(
                    f"SELECT id_key, content_hash, rewound FROM {MESSAGE_IDS} "
                    f"WHERE stream_id = ? AND id_key IN ({', '.join('?' * len(chunk))})"
                ),
                (key, *chunk),
            )
            for row in cursor.fetchall():
                digest = self._open(bytes(row["content_hash"]))
                found[by_digest[bytes(row["id_key"])]] = IndexEntry(digest, bool(row["rewound"]))
        return found

    def version(self, cursor: Any, stream_id: UUID) -> int | None:
        """The version the stream's index reflects (None: never indexed)."""
        statement, params = self.state_statement(stream_id)
        cursor.execute(statement, params)
        return self.state_of(cursor).version

    def count(self, cursor: Any, stream_id: UUID) -> int:
        """How many ids the stream's index holds."""
        cursor.execute(
            self._sql(
                f"SELECT COUNT(*) AS n FROM {MESSAGE_IDS} WHERE stream_id = ? AND id_key < ?"
            ),
            (self.stream_key(stream_id), VERSION_KEY),
        )
        return int(cursor.fetchone()["n"])

    def keys(self, cursor: Any, stream_id: UUID) -> Iterator[bytes]:
        """The id keys of the stream's index in order, read a page at a time."""
        key, after = self.stream_key(stream_id), b""
        statement = self._sql(
            f"SELECT id_key FROM {MESSAGE_IDS} WHERE stream_id = ? AND id_key > ? "
            f"AND id_key < ? ORDER BY id_key LIMIT {KEYS_PER_PAGE}"
        )
        while True:
            cursor.execute(statement, (key, after, VERSION_KEY))
            page = [bytes(row["id_key"]) for row in cursor.fetchall()]
            yield from page
            if len(page) < KEYS_PER_PAGE:
                return
            after = page[-1]

    def reset(self, cursor: Any) -> None:
        """Drop every stream's index: the next write of each session indexes it anew."""
        cursor.execute(f"DELETE FROM {MESSAGE_IDS}")
        cursor.execute(f"DELETE FROM {STREAMS}")

    def keys_current(self, cursor: Any) -> bool:
        """Whether the index's keys are this release's (`KEY_VERSION`)."""
        cursor.execute(
            self._sql(f"SELECT value FROM {SETTINGS_TABLE} WHERE name = ?"), (KEY_SETTING,)
        )
        row = cursor.fetchone()
        return row is not None and row["value"] == KEY_VERSION

    def adopt_keys(self, cursor: Any) -> None:
        """In a write transaction: drop an index of other keys (`reset`), and record that its
        keys are this release's. Nothing if they are already."""
        if self.keys_current(cursor):
            return
        self.reset(cursor)
        cursor.execute(self._sql(f"DELETE FROM {SETTINGS_TABLE} WHERE name = ?"), (KEY_SETTING,))
        cursor.execute(
            self._sql(f"INSERT INTO {SETTINGS_TABLE} VALUES (?, ?)"), (KEY_SETTING, KEY_VERSION)
        )

    def write(self, cursor: Any, stream_id: UUID, changes: IndexChanges) -> None:
        key, flag = self.stream_key(stream_id), self.flag
        if changes.replace:
            cursor.execute(self._drop, (key,))
        stored = [(i, e) for i, e in changes.entries.items() if e.content_hash is not None]
        if stored:
            cursor.executemany(
                self._upsert,
                [(key, id_key(i), self._seal(e.content_hash), flag(e.rewound)) for i, e in stored],
            )
        marked = [(i, e) for i, e in changes.entries.items() if e.content_hash is None]
        if marked:
            cursor.executemany(self._mark, [(flag(e.rewound), key, id_key(i)) for i, e in marked])
        version = changes.version.to_bytes(8, "big")
        cursor.execute(self._upsert, (key, VERSION_KEY, version, flag(False)))

    def _seal(self, content_hash: str | None) -> bytes:
        assert content_hash is not None
        digest = bytes.fromhex(content_hash)
        return digest if self.cipher is None else self.cipher.encrypt(digest)

    def _open(self, stored: bytes) -> str:
        return (stored if self.cipher is None else self.cipher.decrypt(stored)).hex()

    def _sql(self, statement: str) -> str:
        return statement if self._param == "?" else statement.replace("?", self._param)


def state_in(row: Any) -> IndexState:
    """The `IndexState` of a row of `state_statement`'s columns."""
    version = row["indexed"]
    indexed = row["indexed_before"] if version is None else int.from_bytes(version, "big")
    return IndexState(indexed, row["unreadable"])
