"""The log's order for the views on PostgreSQL, where writers of different sessions commit
out of the order of their notification ids: (the writing transaction's id, notification id),
read below a mark no row that commits later can sort under.

A row's `xact` is its transaction's id (NULL: written before the column was added, long
committed: first). A reader projects only the rows below a mark (`readable_below`) and tracks
the last pair it projected (`positions_table`): a row that becomes visible later belongs to a
transaction at or above the mark, so it sorts after every pair tracked, even where its
notification id is lower (taken before, committed after).
"""

from __future__ import annotations

LOG_ORDER = "COALESCE(xact, '0'::xid8), notification_id"
WRITE_MODES = (
    "('RowExclusiveLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')"
)


def _writes_log(events_table: str) -> str:
    """Whether a row `r` of `pg_locks` is a write lock on the log's table, granted."""
    return (
        f"r.locktype = 'relation' AND r.relation = '{events_table}'::regclass "
        "AND r.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
        f"AND r.granted AND r.pid IS NOT NULL AND r.mode IN {WRITE_MODES}"
    )


def _not_writing(events_table: str) -> str:
    """The ids (their low 32 bits, as `pg_locks` shows them) of the transactions running at
    the read of the locks (`locks`) that hold no write lock on the log's table."""
    return (
        "SELECT t.transactionid::text::bigint FROM locks t WHERE t.locktype = 'transactionid' "
        "AND t.mode = 'ExclusiveLock' AND t.granted AND t.pid IS NOT NULL "
        f"AND t.pid NOT IN (SELECT r.pid FROM locks r WHERE {_writes_log(events_table)})"
    )


_LOCKS = (  # one read of the lock table, after the statement's snapshot was taken
    "WITH locks AS MATERIALIZED (SELECT locktype, database, relation, mode, granted, pid, "
    "transactionid FROM pg_locks), snapshot AS (SELECT pg_current_snapshot() AS s) "
)
_LOW = "mod(x::text::bigint, 4294967296)"  # an xid8's low 32 bits, as pg_locks shows ids


def readable_below(events_table: str) -> str:
    """The mark below which every row that will ever be in the log is visible to the
    statement's snapshot, computed in that statement: the oldest of the snapshot's running
    transactions that may write the log, else the snapshot's xmax.

    Every writer of the log locks its table (a write mode) before its transaction takes an
    id (the store's writers do so first thing; the library's take its table lock), so a
    transaction running at the snapshot that may write the log either holds that lock when
    `pg_locks` is read (later, in the same statement), or has ended by then (its rows,
    committed after the snapshot, are not visible to it): both count. A transaction of the
    snapshot still running without the lock has an id already, so it will never write the
    log: it does not hold the mark back (unlike `pg_snapshot_xmin`, which every transaction
    of the server does, of any database)."""
    return (
        f"({_LOCKS}SELECT LEAST(pg_snapshot_xmax(s), (SELECT MIN(x) FROM pg_snapshot_xip(s) "
        f"AS x WHERE {_LOW} NOT IN ({_not_writing(events_table)}))) FROM snapshot)"
    )


def own_turn(events_table: str) -> str:
    """Whether no transaction older than the current one (a write of the log) is still
    writing the log: then a statement after this one sees every row that sorts before its
    own, and it may project them with its own (every row that commits later sorts after).
    An older writer took its lock on the log's table before its id, so before the current
    transaction's: if running, it holds both when the locks are read. The locks are read
    only where the statement's snapshot shows a transaction older than the current one
    running (of any database): where it shows none, none writes the log either."""
    return (
        "WITH locks AS MATERIALIZED (SELECT locktype, database, relation, mode, granted, pid, "
        "transactionid FROM pg_locks) SELECT CASE WHEN pg_snapshot_xmin(pg_current_snapshot()) "
        ">= pg_current_xact_id_if_assigned() THEN true ELSE NOT EXISTS (SELECT 1 FROM locks t "
        "WHERE t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock' AND t.granted "
        "AND t.pid <> pg_backend_pid() AND t.pid IN (SELECT r.pid FROM locks r "
        f"WHERE {_writes_log(events_table)}) "
        "AND mod(mod(pg_current_xact_id()::text::bigint, 4294967296) "
        "- t.transactionid::text::bigint + 4294967296, 4294967296) BETWEEN 1 AND 2147483647"
        ") END AS ready"
    )


def log_order_statements(events_table: str) -> list[str]:
    """The transaction id column of the log (no default while it is added: the rows already
    stored are not rewritten), its default (the inserting transaction's id: the library's
    INSERT, which names its columns, fills it), its index in the log's order, and the table
    of the pairs tracked."""
    return [
        f"ALTER TABLE {events_table} ADD COLUMN IF NOT EXISTS xact xid8",
        f"ALTER TABLE {events_table} ALTER COLUMN xact SET DEFAULT pg_current_xact_id()",
        f"CREATE INDEX IF NOT EXISTS {events_table}_log_order ON {events_table} "
        f"((COALESCE(xact, '0'::xid8)), notification_id)",
        f"CREATE TABLE IF NOT EXISTS {positions_table(events_table)} ("
        "application_name TEXT PRIMARY KEY, xact xid8, notification_id BIGINT NOT NULL)",
    ]


def positions_table(events_table: str) -> str:
    """The table of the views' tracked places in the log's order (`Mark`)."""
    return events_table.removesuffix("_events") + "_positions"
