"""The read models on a SQL database, whatever the dialect: plain tables users may query.

A store's write projects its events in its own transaction when it may (`project_written`);
every query first brings the views up to the log (a batch per transaction, `catch_up`), so a
read reflects every write that returned before it, by any writer in any process. The search
index is not written with them: a search first brings it up to the views
(`search_catch_up`), and a follower keeps it warm. The views
are composed of a `Dialect` (transactions, types, catalog), a `SearchIndex` and a follower
(how new events are noticed: polling, unless the backend can be notified), and of the parts
doing the work: `queries`, `rows`, `writing`, `catch_up` and `rebuild`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol
from uuid import UUID

from eventsourcing.persistence import Mapper

from ....domain.errors import (
    InvalidSearchError,
    SessionErasedError,
    SessionNotFoundError,
    StorageError,
)
from ....domain.messages import Message
from ....domain.transcript import Transcript
from ....projections.projector import Projector
from ....projections.rows import (
    VIEW_NAMES,
    AttemptRow,
    HistoryRow,
    QuarantineRow,
    SessionRow,
)
from ....projections.views import (
    PageMark,
    Progress,
    SearchHit,
    SearchQuery,
    SessionRows,
    TranscriptViews,
    ViewStatus,
)
from ..codec import OrjsonMapper
from ..sealing import content_columns
from .catch_up import BATCH_SIZE, TRACKING_NAME, CatchUp, Followed, SessionState, session_row
from .dialect import Cursor, Dialect
from .pages import PageQueries
from .queries import LEFT_OUT, ViewQueries
from .rebuild import Rebuild, stored_versions
from .rows import RowReader
from .schema import ACTIVE_VIEW, LIVE, QUARANTINE, VERSIONS_TABLE
from .search import SearchIndex
from .search_catch_up import SearchCatchUp
from .writing import ChangeWriter


class Follower(Protocol):
    def __call__(
        self,
        catch_up: CatchUp,
        stop: threading.Event,
        on_batch: Followed | None,
        keep_warm: Callable[[], int],
    ) -> int: ...


def polling(
    catch_up: CatchUp,
    stop: threading.Event,
    on_batch: Followed | None,
    keep_warm: Callable[[], int],
) -> int:
    """Follow the log by polling its head."""
    return catch_up.poll(stop, on_batch, keep_warm)


class SQLTranscriptViews(TranscriptViews):
    """The views of one store on a SQL database."""

    def __init__(
        self,
        dialect: Dialect,
        search: SearchIndex,
        *,
        mapper: Mapper[UUID],
        projector: type[Projector] = Projector,
        follower: Follower = polling,
    ) -> None:
        assert isinstance(mapper, OrjsonMapper)  # every store's (`environment.shared_env`)
        self.dialect = dialect
        self.search_index = search
        self.projector = projector
        self.content = content_columns(mapper.cipher, as_text=dialect.ciphertext_as_text)
        rows = RowReader(dialect, self.content)
        writer = ChangeWriter(dialect, self.content, search)
        self.queries = ViewQueries(rows)
        self.pages = PageQueries(rows)
        self._catch_up = CatchUp(dialect, rows, writer, mapper, projector)
        self._rebuild = Rebuild(dialect, search, self._catch_up, writer, projector)
        self._search = SearchCatchUp(dialect, search)
        self.follower = follower

    def create_tables(self) -> None:
        """Create the view tables (and the tracking table, and the index) if missing. Views
        of another version of `active_messages` (a table before it was an SQL view; a view
        of columns older tables lack) stay as they are: opening the store rebuilds them
        (`ensure_current`)."""
        with self.dialect.reading() as c:
            older = self.dialect.relation_kind(c, LIVE.active_messages) == "table" or (
                self.dialect.relation_kind(c, VERSIONS_TABLE) is not None
                and stored_versions(c).get(ACTIVE_VIEW, self.projector.VERSIONS[ACTIVE_VIEW])
                != self.projector.VERSIONS[ACTIVE_VIEW]
            )
        self.dialect.create_tables(
            [
                *([] if older else self.dialect.columns.create_statements(LIVE)),
                *self.search_index.statements(LIVE),
                self.dialect.columns.versions_statement(),
                self.dialect.columns.settings_statement(),
            ]
        )

    # -- queries ---------------------------------------------------------------------------

    def active(self, session_id: str) -> list[Message]:
        messages = self.queries.current_active(session_id)  # the turn cycle's read
        if messages is not None:
            return messages
        while True:  # `_session` and its query in one statement: why it could not be read
            current, messages = self._catch_up.session_active(session_id)
            if current and messages is not None:
                return self.queries.rows.contents(session_id, messages)
            if current:  # raises, unless the session was started since
                with self.dialect.reading(snapshot=False) as c:
                    self._check(c, session_id, self._catch_up.session_state(c, session_id))
                continue
            self.catch_up()

    def history(self, session_id: str) -> list[HistoryRow]:
        with self._session(session_id) as c:
            return self.queries.history(c, session_id)

    def active_page(
        self, session_id: str, after: int, size: int, *, tail: int | None = None
    ) -> tuple[PageMark, list[tuple[int, Message]]]:
        with self._session(session_id, snapshot=True) as c:
            if tail is not None:
                after = self.pages.tail_start(c, "active_messages", session_id, tail)
            mark = self.pages.mark(c, session_id)
            return mark, self.pages.active(c, session_id, after, size)

    def history_page(
        self, session_id: str, after: int, size: int, *, tail: int | None = None
    ) -> list[HistoryRow]:
        with self._session(session_id, snapshot=tail is not None) as c:
            if tail is not None:
                after = self.pages.tail_start(c, "message_history", session_id, tail)
            return self.pages.history(c, session_id, after, size)

    def event_versions(
        self, stream: str, topics: list[str], after: int, until: int | None
    ) -> list[int]:
        with self.dialect.reading(snapshot=False) as c:
            return self.pages.event_versions(c, stream, topics, after, until)

    def attempts(self, session_id: str) -> list[AttemptRow]:
        with self._session(session_id) as c:
            return self.queries.attempts(c, session_id)

    def snapshot(self, session_id: str) -> tuple[int, list[Message]]:
        with self._session(session_id, snapshot=True) as c:
            return self.queries.snapshot(c, session_id)

    def check_session(self, session_id: str) -> None:
        with self._session(session_id):
            pass

    def read_ahead(self, transaction: object, transcript_id: str) -> None:
        self.dialect.read_ahead(
            transaction,
            [(LEFT_OUT, (transcript_id,)), (session_row(LIVE), (transcript_id,))],
        )

    def left_out(self, transaction: object, transcript_id: str) -> list[int]:
        return self.queries.left_out(self.dialect.cursor_in(transaction), transcript_id)

    def context_in(
        self, transaction: object, session_id: str, message_ids: Sequence[str] = ()
    ) -> tuple[int, list[Message], list[Message]] | None:
        return self.queries.context(self.dialect.cursor_in(transaction), session_id, message_ids)

    def sessions(self, source: str | None = None) -> list[SessionRow]:
        with self._current() as c:
            return self.queries.sessions(c, source)

    def session(self, session_id: str) -> SessionRow | None:
        with self._current() as c:
            return self.queries.session(c, session_id)

    def message(self, session_id: str, message_id: str) -> HistoryRow | None:
        with self._session(session_id) as c:
            return self.queries.message(c, session_id, message_id)

    def messages(self, session_id: str, message_ids: list[str]) -> list[Message]:
        with self._session(session_id) as c:
            return self.queries.messages(c, session_id, message_ids)

    def active_position(self, session_id: str, message_id: str) -> int | None:
        with self._session(session_id) as c:
            return self.queries.active_position(c, session_id, message_id)

    def attempt(self, compaction_id: str) -> AttemptRow | None:
        with self._current() as c:
            return self.queries.attempt(c, compaction_id)

    @contextmanager
    def rows(self, session_id: str) -> Iterator[SessionRows]:
        with self._current(snapshot=True) as c:
            yield self.queries.session_rows(c, session_id)

    def session_ids(self) -> Iterator[str]:
        with self._current() as c:
            return iter(self.queries.session_ids(c))

    def quarantined(self, transcript_id: str | None = None) -> list[QuarantineRow]:
        with self._current() as c:
            if transcript_id is None:
                return self.queries.quarantined(c)
            return self.queries.quarantined_of(c, transcript_id)

    def search(self, query: SearchQuery) -> list[SearchHit]:
        self.search_index.check_available()
        if not query.text.strip():
            raise InvalidSearchError("the search query is empty")
        if query.session_id is not None:
            try:
                self.check_session(query.session_id)  # StorageError if an event is corrupt
            except (SessionNotFoundError, SessionErasedError):
                return []
        with self._indexed() as c:
            return self.search_index.search(c, query)

    def status(self) -> list[ViewStatus]:
        with self.dialect.reading() as c:
            position = self.dialect.tracked(c, TRACKING_NAME)
            head = self._catch_up.head(c)
            c.execute(f"SELECT COUNT(*) AS n FROM {QUARANTINE}")
            quarantined = c.fetchone()["n"]
            statuses = []
            for view in VIEW_NAMES:
                c.execute(f"SELECT COUNT(*) AS n FROM {view}")
                rows = c.fetchone()["n"]
                version = self.projector.VERSIONS[view]
                statuses.append(ViewStatus(view, version, position, head, rows, quarantined))
            version = self.projector.VERSIONS["message_history"]  # the index of its rows
            indexed, _ = self._search.positions(c)
            for index in self.search_index.tables(LIVE):  # none on an encrypted store
                rows = self.search_index.entries(c, index)
                statuses.append(ViewStatus(index, version, indexed, head, rows, quarantined))
        return statuses

    # -- keeping the views up to date -------------------------------------------------------

    def catch_up(self, progress: Progress | None = None) -> int:
        return self._catch_up.run(progress=progress)

    def project_written(self, transaction: object, events: Sequence[Transcript.Event]) -> None:
        cursor = self.dialect.log_cursor(transaction)
        if cursor is None or self._catch_up.project_own(cursor, events):
            return
        while self._catch_up.batch(cursor, LIVE, TRACKING_NAME) == BATCH_SIZE:
            pass  # what was before them: the views were behind
        if events:  # then its own, if the log's order can take them now (else the next read)
            self._catch_up.project_own(cursor, events)

    def follow(self, stop: threading.Event, on_batch: Callable[[int], None] | None = None) -> int:
        return self.follower(self._catch_up, stop, on_batch, self._search.run)

    def rebuild(self, progress: Progress | None = None) -> int:
        return self._rebuild.run(progress)

    def ensure_current(self) -> None:
        self._rebuild.ensure_current(self.content)

    @contextmanager
    def _session(self, session_id: str, *, snapshot: bool = False) -> Iterator[Cursor]:
        """A cursor on views that reflect the whole log, once they hold the session whole
        (see `TranscriptViews`); caught up first if behind."""
        while True:
            with self.dialect.reading(snapshot=snapshot) as c:
                state = self._catch_up.session_state(c, session_id)
                if state.current:
                    self._check(c, session_id, state)
                    yield c
                    return
            self.catch_up()

    def _check(self, c: Cursor, session_id: str, state: SessionState) -> None:
        if state.transcript_id is None:
            raise SessionNotFoundError(session_id)
        if state.erased_at is not None:
            raise SessionErasedError(session_id, state.erased_at)
        if state.quarantined:
            (first, *_) = self.queries.quarantined_of(c, state.transcript_id) or [None]
            detail = f"version {first.version}: {first.reason}" if first else "an event"
            raise StorageError(
                f"cannot read session {session_id!r}: a stored event is corrupt ({detail}); "
                "the views leave it out (quarantined)"
            )

    @contextmanager
    def _indexed(self) -> Iterator[Cursor]:
        """A cursor on views and a search index that reflect the log as it was at the call
        (caught up first if behind), in one snapshot: every write acknowledged before it.
        Not the log's end at the query: appends going on do not keep a search waiting."""
        with self.dialect.reading(snapshot=False) as c:
            end = self._catch_up.end(c)
        while True:
            with self.dialect.reading() as c:
                indexed, views = self._search.marks(c)
                if indexed >= end:
                    yield c
                    return
            if views < end:
                self.catch_up()
            self._search.run(until=end)

    @contextmanager
    def _current(self, *, snapshot: bool = False) -> Iterator[Cursor]:
        """A cursor on views that reflect the whole log (caught up first if behind).

        The views only move forward (a rebuild swaps whole tables in), so whatever is read
        after the check reflects every write that returned before the call; `snapshot`:
        every statement reads the same moment (for answers of several statements)."""
        while True:
            with self.dialect.reading(snapshot=snapshot) as c:
                if self._catch_up.is_current(c):
                    yield c
                    return
            self.catch_up()
