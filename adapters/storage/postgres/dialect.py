"""The views' SQL on PostgreSQL: the same tables and columns as on SQLite, beside the log.

The log is the library's `transcripts_events` (positions are `notification_id`s). Writers
of different sessions commit out of the order of their positions: the views read the log in
(transaction id, notification id) order (`LOG_ORDER`), below a mark no row that commits later
can sort under (`readable_below`), and track the last pair in `transcripts_positions`.

- A view transaction takes a transaction-level advisory lock first (keyed by the events
  table), so that one process at a time projects, and commits with
  `synchronous_commit = off`: the views are derived data, and a crash can only lose their
  tail together with its tracked position, which the next catch-up projects again.
- Queries read in one `REPEATABLE READ` snapshot: the log head, the tracked position and
  every row of a query come from the same moment.
- Columns: text ids sorted by their bytes (`COLLATE "C"`, as SQLite sorts), `json` messages
  (kept exactly as written: key order, and `\\u0000` escapes `jsonb` would refuse),
  `timestamptz` times, `boolean` flags, `bigint` numbers.
- Ids are looked up through hash indexes, not keys: a btree entry holds at most 2,704 bytes,
  and a session and a message id of 1,024 characters of any text take up to 8,192. What
  SQLite's keys make unique is unique here by keys on the ids' SHA-256 digests
  (`transcripts_id_key`): `<table>_session_key`, `_position_key`, `_seq_key`,
  `_message_key` and `_version_key`.
- A rebuild's swapped-in tables get their constraints' and indexes' live names back.
- The search index catches up under an advisory lock of its own (READ COMMITTED, so a
  searcher that waited for another's catch-up sees it), which an erasure takes too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from weakref import WeakSet

import orjson
import psycopg
from eventsourcing.postgres import PostgresDatastore
from psycopg.adapt import Loader
from psycopg.rows import tuple_row

from ..sql.dialect import Dialect, Mark
from ..sql.schema import LIVE, NEXT, REBUILD_SUFFIX, ColumnTypes
from .advisory import advisory_key
from .log_order import LOG_ORDER, log_order_statements, own_turn, positions_table, readable_below
from .read_ahead import ReadAhead
from .snapshots import SSD_COSTS, read_snapshot
from .transactions import PostgresLogTransaction

# The SHA-256 of an id's UTF-8 bytes, for keys. IMMUTABLE, as index expressions must be.
# In a UTF8 database the body is made of IMMUTABLE functions only (the id's bytes as they are
# stored: `decode(…, 'escape')` of the id with its backslashes doubled), so that PostgreSQL
# inlines it: 0.9 µs a digest where `convert_to`, only STABLE because it reads the database's
# encoding, made every call run the SQL function (2.4–3.0 µs), three times per row a
# compaction supersedes. Both bodies give the same digests there: replacing one by the other
# leaves every index valid. Another encoding keeps `convert_to`.
_DIGEST_FUNCTION = (
    "CREATE OR REPLACE FUNCTION transcripts_id_key(id text) RETURNS bytea "
    "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $body$ SELECT sha256({bytes}) $body$"
)
OUTDATED_DIGEST = "convert_to"  # in the body of releases before: replaced on open
ID_DIGEST_FUNCTION = (
    "DO $do$ BEGIN IF current_setting('server_encoding') = 'UTF8' THEN "
    + _DIGEST_FUNCTION.format(bytes=r"decode(replace(id, E'\\', E'\\\\'), 'escape')")
    + "; ELSE "
    + _DIGEST_FUNCTION.format(bytes=f"{OUTDATED_DIGEST}(id, 'UTF8')")
    + "; END IF; END $do$"
)
POSTGRES_COLUMNS = ColumnTypes(
    text='TEXT COLLATE "C"',
    long_text="TEXT",
    integer="BIGINT",
    boolean="BOOLEAN",
    json="JSON",
    time="TIMESTAMPTZ",
    id_digest="transcripts_id_key",  # a btree entry holds at most 2,704 bytes: see above
    functions=(ID_DIGEST_FUNCTION,),  # created with the tables, and by every rebuild
    id_array="COALESCE(to_json(array_agg({ids} ORDER BY {order})), '[]')",  # as orjson writes
    json_array="json_build_array",
    history_storage=" WITH (fillfactor = 50)",  # room for the rows a compaction updates
    create_view="CREATE OR REPLACE VIEW",
)


class _OrjsonLoader(Loader):
    """Reads `json` columns with orjson (psycopg's default is the json module)."""

    def load(self, data: Any) -> Any:
        return orjson.loads(data)


def _read_json(cursor: psycopg.Cursor[Any]) -> None:
    """Read the cursor's `json` columns with orjson."""
    cursor.adapters.register_loader("json", _OrjsonLoader)


@lru_cache(maxsize=512)
def _pyformat(query: str) -> str:
    return query.replace("?", "%s")


_WRITES = ("INSERT", "UPDATE", "DELETE")


class QmarkCursor:
    """A psycopg cursor that takes the `?` placeholders the dialect-neutral SQL is written
    with. Queries of other types (the library's composed SQL) pass through unchanged.
    In a log transaction (`ahead`), a read sent ahead is answered from its own cursor, until
    the first write through this one."""

    __slots__ = ("ahead", "cursor", "_results")

    def __init__(self, cursor: psycopg.Cursor[Any], ahead: ReadAhead | None = None) -> None:
        self.cursor = cursor
        self.ahead = ahead
        self._results = cursor  # where the last statement's rows are

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> QmarkCursor:
        query = _pyformat(query) if isinstance(query, str) else query
        if self.ahead is not None:
            sent = self.ahead.take(query, params)
            if sent is not None:
                self._results = sent
                return self
            if isinstance(query, str) and query.lstrip().upper().startswith(_WRITES):
                self.ahead.drop()
        self._results = self.cursor
        self.cursor.execute(query, params, **kwargs)
        return self

    def executemany(self, query: str, params: Sequence[Sequence[Any]]) -> None:
        if self.ahead is not None:
            self.ahead.drop()
        self.cursor.executemany(_pyformat(query), params)

    def fetchone(self) -> Any:
        return self._results.fetchone()

    def fetchall(self) -> list[Any]:
        return self._results.fetchall()


class PostgresDialect(Dialect):
    columns = POSTGRES_COLUMNS
    position = "notification_id"
    ciphertext_as_text = True

    def __init__(self, datastore: PostgresDatastore, events_table: str) -> None:
        super().__init__(events_table)
        self.datastore = datastore
        lock_ms = max(1, datastore.lock_timeout) * 1000
        views_key = advisory_key("views", events_table)
        self._write_lock = (
            "SET LOCAL synchronous_commit = off; "
            f"SET LOCAL lock_timeout = '{lock_ms}ms'; "
            f"SELECT pg_advisory_xact_lock({views_key})"
        )
        self._try_write_lock = f"SELECT pg_try_advisory_xact_lock({views_key}) AS locked"
        self._index_lock = f"SELECT pg_advisory_xact_lock({advisory_key('search', events_table)})"
        self._index_transaction = (  # READ COMMITTED: each statement sees what the lock waited for
            "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; "
            "SET LOCAL synchronous_commit = off; "
            f"SET LOCAL lock_timeout = '{lock_ms}ms'; {self._index_lock}"
        )
        self._priced: WeakSet[psycopg.Connection[Any]] = WeakSet()  # SSD_COSTS set on them
        self._projected = threading.local()  # `last`: the thread's last write that projected
        self.positions = positions = positions_table(events_table)
        tracked = (
            f"(COALESCE((SELECT xact FROM {positions} WHERE application_name = ?), '0'::xid8), "
            f"COALESCE((SELECT notification_id FROM {positions} WHERE application_name = ?), 0))"
        )
        self.log_order = LOG_ORDER
        self.log_order_back = "COALESCE(xact, '0'::xid8) DESC, notification_id DESC"
        self.after_tracked = f"({LOG_ORDER}) > {tracked}"
        below = readable_below(events_table)
        self.readable = f"(xact IS NULL OR xact < {below})"
        self._own_turn = own_turn(events_table)
        self.mark_key = "COALESCE(xact, '0'::xid8)::text"
        self.reflects_log = (  # the log's last entry (the order's index, read backward) tracked
            f"NOT EXISTS (SELECT 1 FROM (SELECT {LOG_ORDER} FROM {events_table} "
            f"ORDER BY {self.log_order_back} LIMIT 1) AS last (xact, notification_id) "
            f"WHERE (last.xact, last.notification_id) > {tracked})"
        )
        self._tracked_mark = (
            f"SELECT xact::text AS xact, notification_id FROM {positions} "
            "WHERE application_name = ?"
        )
        # Inserts the row of a name, or advances it; a mark at or past the one tracked is
        # refused by the server (its position NULL breaks the column's NOT NULL): a write's
        # transaction need not wait for the answer (see `track`).
        self._track = (
            f"INSERT INTO {positions} AS p (application_name, xact, notification_id) "
            "VALUES (?, ?::xid8, ?) ON CONFLICT (application_name) DO UPDATE "
            "SET xact = EXCLUDED.xact, notification_id = CASE "
            "WHEN (COALESCE(p.xact, '0'::xid8), p.notification_id) "
            "< (COALESCE(EXCLUDED.xact, '0'::xid8), EXCLUDED.notification_id) "
            "THEN EXCLUDED.notification_id END"
        )

    def tracked_params(self, name: str) -> tuple[Any, ...]:
        return (name, name)

    def own_turn(self, c: QmarkCursor) -> Callable[[], bool]:
        """Sent on a cursor of its own, ahead of the write's read of the rows to project
        (a later statement: see `own_turn`), answered with it, in one round trip."""
        cursor = c.cursor.connection.cursor(row_factory=tuple_row)
        cursor.execute(self._own_turn, prepare=True)
        return lambda: bool(cursor.fetchone()[0])

    def tracked_mark(self, c: QmarkCursor, name: str) -> Mark:
        row = c.execute(self._tracked_mark, (name,), prepare=True).fetchone()
        if row is None:
            return None, 0
        xact = row["xact"]
        return (None if xact is None else int(xact)), row["notification_id"]

    def track(self, c: QmarkCursor, name: str, mark: Mark) -> None:
        xact, position = mark
        params = (name, None if xact is None else str(xact), position)
        c.execute(self._track, params, prepare=True)  # in a log transaction: not waited for

    def forget(self, c: QmarkCursor, names: Sequence[str]) -> None:
        c.execute(f"DELETE FROM {self.positions} WHERE application_name = ANY(?)", (list(names),))

    @contextmanager
    def reading(self, *, snapshot: bool = True) -> Iterator[QmarkCursor]:
        if not snapshot:  # autocommit: each statement reads the latest committed state
            with self.datastore.get_connection() as connection, connection.cursor() as cursor:
                # Set for the connection's life, once: the pool is the store's own (the
                # library's datastore), so the setting reaches no one else's queries.
                if connection not in self._priced:
                    cursor.execute(f"SET {SSD_COSTS}")
                    self._priced.add(connection)
                cursor.adapters.register_loader("json", _OrjsonLoader)
                yield QmarkCursor(cursor)
            return
        with read_snapshot(self.datastore) as cursor:
            cursor.adapters.register_loader("json", _OrjsonLoader)
            yield QmarkCursor(cursor)

    @contextmanager
    def writing(self, *, rebuilding: bool = False) -> Iterator[QmarkCursor]:
        with self.datastore.transaction(commit=True) as cursor:
            cursor.execute(self._write_lock)
            cursor.adapters.register_loader("json", _OrjsonLoader)
            yield QmarkCursor(cursor)

    def read_ahead(self, transaction: object, reads: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """The reads go out with the log transaction's first (the lock tried before them:
        holding it, the views' rows they read stay as they are until this transaction
        writes them)."""
        assert isinstance(transaction, PostgresLogTransaction)
        ahead = transaction.ahead
        ahead.send(self._try_write_lock, None, configure=_read_json)
        for query, params in reads:
            ahead.send(_pyformat(query), params, configure=_read_json)

    @contextmanager
    def indexing(self) -> Iterator[QmarkCursor]:
        """A transaction of the search index's catch-up: its own advisory lock, not the
        views' (appends go on); a second searcher waits for the first's catch-up, then
        finds it done."""
        with self.datastore.transaction(commit=True) as cursor:
            cursor.execute(self._index_transaction)
            cursor.adapters.register_loader("json", _OrjsonLoader)
            yield QmarkCursor(cursor)

    def lock_index(self, c: QmarkCursor) -> None:
        c.execute(self._index_lock)

    def log_cursor(self, transaction: object) -> QmarkCursor | None:
        """The log transaction's cursor, once it holds the views' write lock too; None if
        another transaction holds it (a catch-up, a rebuild): never waited for. None too
        where this thread's last write that projected did not commit: its view writes,
        not waited for (`pipelined`), may be what failed it, so its retry leaves the views
        to the next read's catch-up, which quarantines what they cannot take."""
        last, self._projected.last = getattr(self._projected, "last", None), None
        if last is not None and not last.committed:
            return None
        cursor = self.cursor_in(transaction)
        if not cursor.execute(self._try_write_lock, prepare=True).fetchone()["locked"]:
            return None
        assert isinstance(transaction, PostgresLogTransaction)
        self._projected.last = transaction
        return cursor

    def cursor_in(self, transaction: object) -> QmarkCursor:
        assert isinstance(transaction, PostgresLogTransaction)
        cursor = transaction.cursor
        _read_json(cursor)
        return QmarkCursor(cursor, transaction.ahead)

    def pipelined(self, c: QmarkCursor) -> AbstractContextManager[object]:
        """psycopg's pipeline mode: the statements go out together, one round trip."""
        return c.cursor.connection.pipeline()

    def defers_errors(self, c: QmarkCursor) -> bool:
        """In a log transaction (in pipeline mode), whose view writes are not waited for:
        they go out with its COMMIT, and an error fails the write (see `log_cursor` for
        its retry)."""
        return c.ahead is not None

    def create_tables(self, statements: Sequence[str]) -> None:
        """The views' tables; not the library's tracking table, which the views' marks left
        for `positions_table`: a store that has one keeps it."""
        with self.writing() as c:
            for statement in [*log_order_statements(self.events_table), *statements]:
                c.execute(statement)

    def relation_kind(self, c: QmarkCursor, name: str) -> str | None:
        c.execute(
            "SELECT c.relkind AS kind FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = ? AND c.relname = ? AND c.relkind IN ('r', 'v')",
            (self.datastore.schema, name),
        )
        row = c.fetchone()
        return None if row is None else {"r": "table", "v": "view"}[row["kind"]]

    def user_indexes(self, c: QmarkCursor, tables: Sequence[str]) -> list[str]:
        ours = [name for name, _, _ in self.columns.id_indexes(LIVE)]
        ours += self.columns.retired_indexes(LIVE)
        c.execute(
            "SELECT pg_get_indexdef(i.indexrelid) AS statement FROM pg_index i "
            "JOIN pg_class t ON t.oid = i.indrelid "
            "JOIN pg_class x ON x.oid = i.indexrelid "
            "JOIN pg_namespace n ON n.oid = t.relnamespace "
            "WHERE n.nspname = ? AND t.relname = ANY(?) AND NOT x.relname = ANY(?) "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)",
            (self.datastore.schema, list(tables), ours),
        )
        return [row["statement"] for row in c.fetchall()]

    def swap_table(self, c: QmarkCursor, live: str, rebuilt: str) -> None:
        super().swap_table(c, live, rebuilt)
        # The constraints (and their indexes) keep the names they were created with
        # (`active_messages__next_pkey`): give them the live table's names again.
        c.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = to_regclass(?)",
            (self._qualified(live),),
        )
        for row in c.fetchall():
            name = row["conname"]
            if REBUILD_SUFFIX in name:
                renamed = name.replace(REBUILD_SUFFIX, "", 1)
                c.execute(f'ALTER TABLE {live} RENAME CONSTRAINT "{name}" TO "{renamed}"')
        # So do the indexes of its ids.
        for index, table, _ in self.columns.id_indexes(NEXT):
            if table == rebuilt:
                c.execute(f"ALTER INDEX {index} RENAME TO {index.replace(REBUILD_SUFFIX, '', 1)}")

    def tuples(
        self, c: QmarkCursor, statement: str, params: Sequence[Any]
    ) -> list[tuple[Any, ...]]:
        cursor = c.cursor
        factory, cursor.row_factory = cursor.row_factory, tuple_row
        try:  # prepared at once: the reads of a session's rows are the hot path
            return c.execute(statement, params, prepare=True).fetchall()
        finally:
            cursor.row_factory = factory

    def load_json(self, value: Any) -> Any:
        return value  # already decoded by the cursor's loader

    def load_time(self, value: datetime) -> datetime:
        return value.astimezone(UTC)

    def time_param(self, value: datetime) -> datetime:
        return value

    def bool_param(self, value: bool) -> Any:
        return bool(value)

    def _qualified(self, name: str) -> str:
        return f'"{self.datastore.schema}"."{name}"'
