"""Rebuilding the views from the log: on demand, and on opening when their versions differ.

A rebuild replays the whole log into fresh tables (`…__next`, with their search index) while
writers and readers go on with the live ones, then, holding the views' write lock, projects
the last entries and swaps the rebuilt tables in, in one transaction: readers see the old
views until the new ones are complete. The search index is swapped in empty, its tracked
position with it: the next search (or a follower) indexes the rows, at its catch-up's pace.
Indexes users made on the live tables are made again on the new ones. Two rebuilds at once
both end: the second finds the first's swap done.

Opening a store checks, in one transaction, that the cipher key can read it (the
`store_settings` row) and that the views were built with the projector's view versions;
views of older versions are rebuilt, views of newer ones (a newer release) refused.
"""

from __future__ import annotations

from eventsourcing.persistence import PersistenceError

from ....domain.errors import StorageError
from ....projections.projector import Projector
from ....projections.views import Progress
from ..sealing import ENCRYPTION_SETTING, SETTINGS_TABLE, ContentColumns, check_setting
from ..sealing import content_columns as plain_columns
from .catch_up import TRACKING_NAME, CatchUp
from .dialect import Cursor, Dialect
from .schema import LIVE, NEXT, VERSIONS_TABLE
from .search import SearchIndex
from .search_catch_up import SEARCH_TRACKING_NAME
from .writing import ChangeWriter

REBUILD_TRACKING_NAME = "transcripts~rebuild"


class Rebuild:
    def __init__(
        self,
        dialect: Dialect,
        search: SearchIndex,
        catch_up: CatchUp,
        writer: ChangeWriter,
        projector: type[Projector],
    ) -> None:
        self.dialect = dialect
        self.search = search
        self.catch_up = catch_up
        self.writer = writer
        self.projector = projector

    def run(self, progress: Progress | None = None) -> int:
        """Replay the whole log into fresh tables and swap them in; return the entries."""
        with self.dialect.writing(rebuilding=True) as c:
            self.dialect.drop(c, NEXT.active_messages)  # a table, made by an older release
            for table in [*NEXT.names(), *self.search.tables(NEXT)]:
                c.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in [
                *self.dialect.columns.create_statements(NEXT),
                *self.search.statements(NEXT),
            ]:
                c.execute(statement)
            self.dialect.forget(c, [REBUILD_TRACKING_NAME])
        try:
            done = self.catch_up.run(NEXT, REBUILD_TRACKING_NAME, progress)
            with self.dialect.writing(rebuilding=True) as c:  # writers wait: the rest, the swap
                done += self._swap_in(c)
        except PersistenceError:
            if self._rebuilt_by_another():
                return 0
            raise
        return done

    def ensure_current(self, content: ContentColumns) -> None:
        """Refuse a key that cannot read the store; rebuild views of other versions."""
        with self.dialect.writing() as c:
            self._check_encryption(c, content)
            stored = stored_versions(c)
            self._refuse_newer(stored)
            self.search.upgrade(c)
            if stored == self.projector.VERSIONS:
                return
            if not stored and not self._has_events(c):  # a new store: its tables are current
                self.writer.versions(c, self.projector.VERSIONS)
                return
        self.run()  # older views, even with no rows, may lack columns: made afresh

    def _refuse_newer(self, stored: dict[str, int]) -> None:
        """StorageError if a newer release built the views: rebuilding them down would undo
        its work each time this release opens the store (and its own, each time it does)."""
        newer = {
            view: version
            for view, version in stored.items()
            if version > self.projector.VERSIONS.get(view, version)
        }
        if newer:
            built = ", ".join(f"{view} {version}" for view, version in sorted(newer.items()))
            ours = ", ".join(f"{view} {self.projector.VERSIONS[view]}" for view in sorted(newer))
            raise StorageError(
                f"the views of this store were built by a newer release of transcript-store "
                f"(view versions {built}; this release has {ours}): upgrade transcript-store"
            )

    def _swap_in(self, c: Cursor) -> int:
        done = 0
        while count := self.catch_up.batch(c, NEXT, REBUILD_TRACKING_NAME):
            done += count
        mark = self.dialect.tracked_mark(c, REBUILD_TRACKING_NAME)
        self.dialect.lock_index(c)  # a catch-up of the index swapped out ends first
        user_indexes = self.dialect.user_indexes(c, LIVE.names())  # made again on the new tables
        live_tables = [*LIVE.names(), *self.search.tables(LIVE)]
        rebuilt_tables = [*NEXT.names(), *self.search.tables(NEXT)]
        for view in (LIVE.active_messages, NEXT.active_messages):  # made again on the new table
            self.dialect.drop(c, view)
        self.search.before_swap(c)
        for live, rebuilt in zip(live_tables, rebuilt_tables, strict=True):
            self.dialect.swap_table(c, live, rebuilt)
        c.execute(self.dialect.columns.active_view_statement(LIVE))
        self.search.after_swap(c)
        for statement in user_indexes:
            c.execute(statement)
        # The swapped-in search index is empty: the next search fills it.
        self.dialect.forget(c, [TRACKING_NAME, REBUILD_TRACKING_NAME, SEARCH_TRACKING_NAME])
        if mark[1]:
            self.dialect.track(c, TRACKING_NAME, mark)
        self.writer.versions(c, self.projector.VERSIONS)
        return done

    def _rebuilt_by_another(self) -> bool:
        """Whether a concurrent rebuild swapped its tables in (and took ours with it)."""
        with self.dialect.reading() as c:
            return (
                self.dialect.relation_kind(c, NEXT.sessions) is None
                and stored_versions(c) == self.projector.VERSIONS
            )

    def _check_encryption(self, c: Cursor, content: ContentColumns) -> None:
        """Record whether a new store is encrypted; refuse a key that cannot read this one."""
        c.execute(f"SELECT value FROM {SETTINGS_TABLE} WHERE name = ?", (ENCRYPTION_SETTING,))
        row = c.fetchone()
        if row is not None:
            check_setting(content, row["value"])
            return
        if self._has_events(c):  # made before stores recorded it: not encrypted
            check_setting(content, plain_columns(None).setting())
        c.execute(
            f"INSERT INTO {SETTINGS_TABLE} VALUES (?, ?)", (ENCRYPTION_SETTING, content.setting())
        )

    def _has_events(self, c: Cursor) -> bool:
        c.execute(f"SELECT 1 AS found FROM {self.dialect.events_table} LIMIT 1")
        return c.fetchone() is not None


def stored_versions(c: Cursor) -> dict[str, int]:
    """The version of each view the store's views were built with."""
    c.execute(f"SELECT view, version FROM {VERSIONS_TABLE}")
    return {row["view"]: row["version"] for row in c.fetchall()}
