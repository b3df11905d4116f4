"""Reading a session a page at a time: its active context, its history and its raw log as
iterators holding one page in memory, whatever the session's length.

Each page is read in a transaction of its own (nothing is held open while the caller works
on a page), after the last position of the page before (keyset pagination): a page costs
the same wherever it starts. `tail=N` starts after the position found by one look-up, in
the snapshot that reads the first page, so the last N rows of one state are read without
the ones before. Writes between pages show in the pages after them: history rows and
events only ever come after the ones read, and so do messages appended to the active
context; but a compaction, a rewind or a restore rewrites it, so an active context changed
so between two pages (the version of its last such event, `sessions.context_version`)
raises `TranscriptError` (read it again): what `iter_active` yields is always the active
context of one version, or its first or last N. The first page is read by the call, so an
unknown or erased session raises there, before anything is yielded.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any, TypeVar

from eventsourcing.persistence import StoredEvent

from ..domain.errors import SessionNotFoundError, TranscriptError
from ..domain.messages import Message
from ..domain.transcript import Transcript, transcript_id
from ..projections.rows import HistoryRow
from ..projections.views import PageMark, TranscriptViews
from . import arguments
from .event_log import TranscriptLog
from .results import event_entry, history_entry

T = TypeVar("T")
PAGE_SIZE = 500  # rows a page: bounded memory, few round trips


class PagedReads:
    """The iterating reads of `TranscriptStore` (a base class: it uses the store's views,
    log and retried `_read`)."""

    _views: TranscriptViews
    _log: TranscriptLog
    _read: Callable[..., Any]

    def iter_active(
        self,
        session_id: str,
        *,
        limit: int | None = None,
        tail: int | None = None,
        page_size: int = PAGE_SIZE,
    ) -> Iterator[Message]:
        """The active context in order, as `active()`, a page at a time; `limit`: only the
        first N messages, `tail`: only the last N."""
        session_id = arguments.session_id(session_id)
        window = _Window(limit, tail, page_size)
        mark, page = self._read(
            lambda: self._views.active_page(session_id, 0, window.size, tail=window.tail)
        )
        return self._active_pages(session_id, mark, page, window)

    def iter_history(
        self,
        session_id: str,
        *,
        limit: int | None = None,
        tail: int | None = None,
        page_size: int = PAGE_SIZE,
        versions: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """Every message ever stored, in order, as `history()`, a page at a time; `limit`:
        only the first N, `tail`: only the last N. `versions`: each entry also has
        `version` (of the event that first stored it), `rewound_version` and
        `restored_version` (see Read models)."""
        session_id = arguments.session_id(session_id)
        arguments.flag(versions, "versions")
        window = _Window(limit, tail, page_size)
        page = self._read(
            lambda: self._views.history_page(session_id, 0, window.size, tail=window.tail)
        )
        entry = _with_versions if versions else history_entry
        return (entry(row) for row in self._history_pages(session_id, page, window))

    def iter_events(
        self,
        session_id: str,
        *,
        types: Collection[str] | None = None,
        after: int = 0,
        until: int | None = None,
        page_size: int = PAGE_SIZE,
    ) -> Iterator[dict[str, Any]]:
        """The raw event log of a session, as `events()`, a page at a time; `types`: only
        events of these types (`"Rewound"`, …), found by the log's key, the others not even
        read (for types of few events: each is read on its own); `after`,
        `until`: only the events after version `after`, up to version `until`."""
        session_id = arguments.session_id(session_id)
        after = arguments.integer(after, "a version", least=0)
        until = arguments.optional_integer(until, "a version")
        size = arguments.integer(page_size, "a page size")
        if types is not None:
            return self._events_of(session_id, _topics(types), after, until)
        page = self._log.stored_page(session_id, after, size, until)
        if not page and not after:
            raise SessionNotFoundError(session_id)
        return self._event_pages(session_id, page, size, until)

    # -- the pages -----------------------------------------------------------------------

    def _active_pages(
        self,
        session_id: str,
        mark: PageMark,
        page: list[tuple[int, Message]],
        window: _Window,
    ) -> Iterator[Message]:
        while True:
            for _, message in page:
                yield message
            after = window.next_after(page, lambda row: row[0])
            if after is None:
                return
            now, page = self._read(
                lambda after=after: self._views.active_page(session_id, after, window.size)
            )
            if now != mark:
                raise TranscriptError(
                    f"the active context of session {session_id!r} was compacted or rewound "
                    f"while it was read (a compaction, rewind or restore at version {now}): "
                    "read it again"
                )

    def _history_pages(
        self, session_id: str, page: list[HistoryRow], window: _Window
    ) -> Iterator[HistoryRow]:
        while True:
            yield from page
            after = window.next_after(page, lambda row: row.seq)
            if after is None:
                return
            page = self._read(
                lambda after=after: self._views.history_page(session_id, after, window.size)
            )

    def _event_pages(
        self, session_id: str, page: Sequence[StoredEvent], size: int, until: int | None
    ) -> Iterator[dict[str, Any]]:
        while True:
            for stored in page:
                yield event_entry(self._log.decoded(session_id, stored))
            if len(page) < size:
                return
            page = self._log.stored_page(session_id, page[-1].originator_version, size, until)

    def _events_of(
        self, session_id: str, topics: list[str], after: int, until: int | None
    ) -> Iterator[dict[str, Any]]:
        """The events of `topics`: their versions found in the log's key, then each read."""
        stream = transcript_id(session_id).hex
        versions = (
            self._read(lambda: self._views.event_versions(stream, topics, after, until))
            if topics
            else []
        )
        if not versions and not after and not self._log.stored_page(session_id, 0, 1):
            raise SessionNotFoundError(session_id)
        return (
            event_entry(self._log.decoded(session_id, stored))
            for version in versions
            for stored in self._log.stored_page(session_id, version - 1, 1)
        )


class _Window:
    """Which rows a paged read yields (the first `limit`, or the last `tail`), and how many
    it asks for a page."""

    def __init__(self, limit: int | None, tail: int | None, page_size: int) -> None:
        if limit is not None and tail is not None:
            raise TranscriptError(f"give limit or tail, not both: {limit=}, {tail=}")
        self.tail = arguments.optional_integer(tail, "a tail")
        # rows left to read: the first `limit`, or the `tail` from where they began
        self.left = arguments.optional_integer(limit, "a limit") if tail is None else tail
        self.page_size = arguments.integer(page_size, "a page size")

    @property
    def size(self) -> int:
        """Rows to ask for in the next page."""
        return self.page_size if self.left is None else min(self.page_size, self.left)

    def next_after(self, page: Sequence[T], position: Callable[[T], int]) -> int | None:
        """The position the next page starts after, once `page` is yielded (None: done)."""
        asked = self.size
        if self.left is not None:
            self.left -= len(page)
        if len(page) < asked or asked == 0 or self.left == 0:
            return None
        return position(page[-1])


def _topics(types: Collection[str]) -> list[str]:
    """The stored topics of event types named as `events()` names them ("Rewound", …)."""
    if isinstance(types, str) or not all(isinstance(name, str) for name in types):
        raise TranscriptError(f"types is a collection of event type names: {types!r}")
    return [f"{Transcript.TOPIC}.{name}" for name in types]


def _with_versions(row: HistoryRow) -> dict[str, Any]:
    return {
        **history_entry(row),
        "version": row.appended_version,
        "rewound_version": row.rewound_version,
        "restored_version": row.restored_version,
    }
