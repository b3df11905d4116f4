"""The read models' contract: what the store asks of the stored views, whatever the backend."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from threading import Event

from ..domain.messages import Message
from ..domain.transcript import Transcript
from .rows import ActiveRow, AttemptRow, HistoryRow, QuarantineRow, SessionRow

Progress = Callable[[int, int], None]  # progress(done, total)
# The version of the last event that changed a session's active context otherwise than by
# appending a new message to it (a compaction, a rewind, a restore): a page read under
# another mark than the first does not follow on.
PageMark = int


@dataclass(frozen=True)
class ViewStatus:
    """Where one view stands against the log."""

    view: str
    version: int
    position: int  # last log position the view reflects
    head: int  # last log position
    rows: int
    quarantined: int

    @property
    def lag(self) -> int:
        return self.head - self.position


@dataclass(frozen=True)
class SearchQuery:
    """A full-text search: the query text in the backend's syntax, and its filters."""

    text: str
    session_id: str | None = None  # only this session's messages
    role: str | None = None  # only messages of this role
    active_only: bool = False  # only messages in their session's active context
    limit: int = 20  # at most this many hits


@dataclass(frozen=True)
class SearchHit:
    """A message matching a full-text search, with a snippet around the match."""

    session_id: str
    message_id: str
    role: str
    active: bool
    snippet: str
    rank: float  # lower is better


@dataclass(frozen=True)
class SessionRows:
    """Every view row of one session, for verification; those that cannot be read are left
    out, named in `unreadable`: (view, the row's message id, compaction id or session id,
    why), once they are read. The rows of each view may be read as they are iterated (once,
    in order: active, history, attempts), so that they are never held together."""

    session: SessionRow | None
    active: Iterable[ActiveRow]
    history: Iterable[HistoryRow]
    attempts: Iterable[AttemptRow]
    unreadable: list[tuple[str, str, str]] = field(default_factory=list)


class TranscriptViews(ABC):
    """The stored read models: plain tables users may query, kept exactly once from the log.

    Every query reflects the whole log: it catches the views up first if they are behind.
    A query of one session raises SessionNotFoundError if the session was never started,
    SessionErasedError if it was erased, and StorageError naming the version if one of its
    events could not be read (the views quarantined it): the views would be incomplete.
    """

    @abstractmethod
    def active(self, session_id: str) -> list[Message]:
        """The active messages of a session in order."""

    @abstractmethod
    def history(self, session_id: str) -> list[HistoryRow]:
        """Every message of a session in storage order."""

    @abstractmethod
    def active_page(
        self, session_id: str, after: int, size: int, *, tail: int | None = None
    ) -> tuple[PageMark, list[tuple[int, Message]]]:
        """Up to `size` (position, message) of the active context after position `after` —
        or, with `tail`, after the position where its last `tail` messages begin, found in
        the same snapshot — and the session's page mark in that snapshot."""

    @abstractmethod
    def history_page(
        self, session_id: str, after: int, size: int, *, tail: int | None = None
    ) -> list[HistoryRow]:
        """Up to `size` message_history rows after seq `after` (or, with `tail`, after the
        seq where its last `tail` rows begin, found in the same snapshot), in storage
        order."""

    @abstractmethod
    def event_versions(
        self, stream: str, topics: list[str], after: int, until: int | None
    ) -> list[int]:
        """The versions of the stored events of `stream` (a transcript id, hex) with one of
        `topics`, after `after` and up to `until`, read from the log without their state."""

    @abstractmethod
    def attempts(self, session_id: str) -> list[AttemptRow]:
        """The compaction attempts of a session, oldest first."""

    @abstractmethod
    def snapshot(self, session_id: str) -> tuple[int, list[Message]]:
        """The session's version and active messages, read together."""

    @abstractmethod
    def sessions(self, source: str | None = None) -> list[SessionRow]:
        """Every session (of `source`, if given), in the order they were started."""

    @abstractmethod
    def session(self, session_id: str) -> SessionRow | None:
        """The sessions row of a session, if it has one (an erased session's included)."""

    @abstractmethod
    def message(self, session_id: str, message_id: str) -> HistoryRow | None:
        """One message_history row of a session, if it has that message."""

    @abstractmethod
    def messages(self, session_id: str, message_ids: list[str]) -> list[Message]:
        """The stored messages of a session with these ids, in the order given."""

    @abstractmethod
    def active_position(self, session_id: str, message_id: str) -> int | None:
        """The position of a message in the active context, if it is active."""

    @abstractmethod
    def attempt(self, compaction_id: str) -> AttemptRow | None:
        """One compaction_attempts row."""

    @abstractmethod
    def rows(self, session_id: str) -> AbstractContextManager[SessionRows]:
        """Every view row of a session, read as they are iterated while the block runs,
        from one moment of the views."""

    @abstractmethod
    def session_ids(self) -> Iterator[str]:
        """The session ids the views know, in the order they were started."""

    @abstractmethod
    def quarantined(self, transcript_id: str | None = None) -> list[QuarantineRow]:
        """Log entries the views could not take (of one transcript: its id as hex)."""

    @abstractmethod
    def check_session(self, session_id: str) -> None:
        """Raise as a query of the session would (unknown, erased, unreadable event)."""

    @abstractmethod
    def search(self, query: SearchQuery) -> list[SearchHit]:
        """Messages ever stored matching a full-text query, best first."""

    @abstractmethod
    def catch_up(self, progress: Progress | None = None) -> int:
        """Project the log entries the views have not seen yet; return how many."""

    @abstractmethod
    def read_ahead(self, transaction: object, transcript_id: str) -> None:
        """Say the reads a write of the transcript (its id as hex) will make of the views in
        the log's write transaction, so that a backend across a network can send them with
        the log's (see `LogTransaction.read_ahead`)."""

    @abstractmethod
    def left_out(self, transaction: object, transcript_id: str) -> list[int]:
        """The versions of the transcript's events (its id as hex) the views quarantined,
        read inside a write transaction of the log (the backend's)."""

    @abstractmethod
    def context_in(
        self, transaction: object, session_id: str, message_ids: Sequence[str] = ()
    ) -> tuple[int, list[Message], list[Message]] | None:
        """The session's version, its active messages and its stored messages of
        `message_ids` (those the views hold), read inside a write transaction of the log (the
        backend's) as the views are, current or not (never waited for); None if they cannot
        say: no such session, quarantined or erased, a damaged row."""

    @abstractmethod
    def project_written(self, transaction: object, events: Sequence[Transcript.Event]) -> None:
        """Project, inside a write transaction of the log (its backend's), the entries it
        stored and any before them not projected yet, so that the views are current when it
        commits: one commit per write. `events`: the ones it stored, as in hand (projected
        without reading them back when nothing else is to be projected). Where that cannot
        be done now (another process holds the views), the entries are left to the next
        catch-up."""

    @abstractmethod
    def follow(self, stop: Event, on_batch: Callable[[int], None] | None = None) -> int:
        """Project new log entries as they are stored, until `stop` is set; return how many."""

    @abstractmethod
    def rebuild(self, progress: Progress | None = None) -> int:
        """Replay the whole log into fresh tables and swap them in atomically."""

    @abstractmethod
    def ensure_current(self) -> None:
        """Rebuild the views if they were built by other view versions than the projector's."""

    @abstractmethod
    def status(self) -> list[ViewStatus]:
        """Per view: version, tracked position against the log head, rows, quarantined."""
