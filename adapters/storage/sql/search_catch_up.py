"""Bringing the full-text index up to the views, on read: the index is a projection that lags.

Appends do not write the index. It tracks the place in the log's order it reflects
(`SEARCH_TRACKING_NAME`, a `Mark` as the views'), and catches up to the views' by the log
entries in between: it indexes the `message_history` rows they added (PostgreSQL finds them
by `log_position`, the position of the event that added each, never reused; SQLite by rowid,
which follows it), a batch of entries per
transaction, holding the index's lock (`Dialect.indexing`). A catch-up waiting for another's
finds the rows done (each batch reads the tracked place after the lock) and indexes nothing
twice. An erasure deletes a
session's entries with its rows, holding the same lock: a catch-up cannot index them again.
"""

from __future__ import annotations

from .catch_up import TRACKING_NAME, OrderKey, entry_mark, order_key
from .dialect import Cursor, Dialect
from .schema import LIVE
from .search import SEARCH_TRACKING_NAME, SearchIndex

POSITIONS_PER_BATCH = 10_000  # log positions indexed per transaction


class SearchCatchUp:
    """Indexes the history rows the search index has not seen, up to the views."""

    def __init__(self, dialect: Dialect, index: SearchIndex) -> None:
        self.dialect = dialect
        self.index = index
        after, order = dialect.after_tracked, dialect.log_order
        self._next = (  # the log entries the views reflect and the index does not, in order
            f"SELECT {dialect.position} AS position, {dialect.mark_key} AS mark "
            f"FROM {dialect.events_table} WHERE {after} AND NOT ({after}) "
            f"ORDER BY {order} LIMIT ?"
        )
        self._params = (
            *dialect.tracked_params(SEARCH_TRACKING_NAME),
            *dialect.tracked_params(TRACKING_NAME),
            POSITIONS_PER_BATCH,
        )

    def positions(self, c: Cursor) -> tuple[int, int]:
        """The log positions of the last entries the index and the views reflect."""
        return (
            self.dialect.tracked(c, SEARCH_TRACKING_NAME),
            self.dialect.tracked(c, TRACKING_NAME),
        )

    def marks(self, c: Cursor) -> tuple[OrderKey, OrderKey]:
        """Where the index and the views are in the log's order."""
        return (
            order_key(self.dialect.tracked_mark(c, SEARCH_TRACKING_NAME)),
            order_key(self.dialect.tracked_mark(c, TRACKING_NAME)),
        )

    def run(self, until: OrderKey | None = None) -> int:
        """Index the rows the views hold and the index does not (those up to `until` in
        the log's order at least: batches end there, so that searches beside a stream of
        appends end too); return how many. A current index is seen without its lock:
        searchers of a current index never wait."""
        if not self.index.tables(LIVE):  # an encrypted store's: none
            return 0
        with self.dialect.reading(snapshot=False) as c:
            indexed, views = self.marks(c)
        if indexed >= views:
            return 0
        done = 0
        while True:
            with self.dialect.indexing() as c:
                count, indexed, views = self.batch(c)
            done += count
            if indexed >= (views if until is None else min(until, views)):
                return done

    def batch(self, c: Cursor) -> tuple[int, OrderKey, OrderKey]:
        """Index the rows of the next log entries (up to `POSITIONS_PER_BATCH`), tracking
        the last; return how many rows, and where the index and the views are."""
        indexed, views = self.marks(c)
        if indexed >= views:
            return 0, indexed, views
        c.execute(self._next, self._params)
        rows = c.fetchall()
        if not rows:  # none left in between (erased): the index is where the views are
            last = self.dialect.tracked_mark(c, TRACKING_NAME)
            self.dialect.track(c, SEARCH_TRACKING_NAME, last)
            return 0, order_key(last), views
        last = entry_mark(rows[-1])
        count = self.index.index(c, LIVE, [row["position"] for row in rows])
        self.dialect.track(c, SEARCH_TRACKING_NAME, last)
        return count, order_key(last), views
