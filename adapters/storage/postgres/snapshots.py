"""Read transactions on a PostgreSQL store: one snapshot, read only, ended by COMMIT.

psycopg forgets every statement it prepared on a connection when the server answers a
ROLLBACK (as it must after one that undid DDL). The library's read transaction ends so
(`transaction(commit=False)`), and each of the store's statements on that connection was then
parsed and planned again at its next five executions before psycopg prepared it again
(0.1–0.9 ms of server time for some of a write's): after a compaction, which reads in
snapshots, the next appends and reads of a pool's connections paid it. A read-only
transaction's COMMIT does what its ROLLBACK would.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from eventsourcing.postgres import PostgresDatastore

# Reads price index scans as on an SSD (PostgreSQL's default random_page_cost, 4, is a
# spinning disk's). After a compaction the superseded rows' old versions keep their entries
# in the position key until VACUUM; a bitmap scan, which the default prices lower, visits all
# of them on every read (a context of 50 read 1,400 pages), where an index scan marks them
# dead the first time (255 pages after).
SSD_COSTS = "random_page_cost = 1.1"
READ_TRANSACTION = (
    f"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL {SSD_COSTS}"
)


@contextmanager
def read_snapshot(datastore: PostgresDatastore) -> Iterator[Any]:
    """A cursor in a read-only transaction on one snapshot, committed at the end (rolled
    back if the block raised)."""
    with datastore.transaction(commit=True) as cursor:
        cursor.execute(READ_TRANSACTION)
        yield cursor
