"""Bringing the full-text index up to the views, on read: the index is a projection that lags.

Appends do not write the index. It tracks, in the library's tracking table, the log position
it reflects (`SEARCH_TRACKING_NAME`), and catches up to the views' tracked position by the
`log_position` of the `message_history` rows (the position of the event that added each;
positions are never reused): a batch of positions per transaction, holding the index's lock
(`Dialect.indexing`). A catch-up waiting for another's finds the rows done (each batch reads
the tracked position after the lock) and indexes nothing twice. An erasure deletes a
session's entries with its rows, holding the same lock: a catch-up cannot index them again.
"""

from __future__ import annotations

from .catch_up import TRACKING_NAME
from .dialect import Cursor, Dialect
from .schema import LIVE
from .search import SEARCH_TRACKING_NAME, SearchIndex

POSITIONS_PER_BATCH = 10_000  # log positions indexed per transaction


class SearchCatchUp:
    """Indexes the history rows the search index has not seen, up to the views."""

    def __init__(self, dialect: Dialect, index: SearchIndex) -> None:
        self.dialect = dialect
        self.index = index
        self._next = (
            f"SELECT MIN(log_position) AS next FROM {LIVE.message_history} WHERE log_position > ?"
        )

    def positions(self, c: Cursor) -> tuple[int, int]:
        """The log positions the index and the views reflect."""
        return (
            self.dialect.tracked(c, SEARCH_TRACKING_NAME),
            self.dialect.tracked(c, TRACKING_NAME),
        )

    def run(self, until: int | None = None) -> int:
        """Index the rows the views hold and the index does not (those up to log position
        `until` at least: batches end there, so that searches beside a stream of appends
        end too); return how many. A current index is seen without its lock: searchers of
        a current index never wait."""
        if not self.index.tables(LIVE):  # an encrypted store's: none
            return 0
        with self.dialect.reading(snapshot=False) as c:
            indexed, views = self.positions(c)
        if indexed >= views:
            return 0
        done = 0
        while True:
            with self.dialect.indexing() as c:
                count, indexed, views = self.batch(c)
            done += count
            if indexed >= (views if until is None else min(until, views)):
                return done

    def batch(self, c: Cursor) -> tuple[int, int, int]:
        """Index the rows of the next positions (up to `POSITIONS_PER_BATCH`), tracking the
        last; return how many rows, and the positions of the index and the views."""
        indexed, views = self.positions(c)
        if indexed >= views:
            return 0, indexed, views
        c.execute(self._next, (indexed,))
        first = c.fetchone()["next"]
        last = views if first is None else min(views, first + POSITIONS_PER_BATCH - 1)
        count = 0 if first is None or first > last else self.index.index(c, LIVE, first, last)
        self.dialect.track(c, SEARCH_TRACKING_NAME, last)
        return count, last, views
