"""Keeping the views in shape: the store's rebuild, catch-up, status, follow and verify calls.

Rebuild, catch-up and status are the views' own (see `projections.views`); verification
folds each session's log independently of the projector (`projections.fold`) and names
every difference (`projections.verify`). Both look after the write side's index of message
ids too (`domain.id_index`), which the log's writes keep: verify diffs it against the log, a
rebuild drops it (each session's next write indexes it anew from its log).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import orjson
from eventsourcing.persistence import PersistenceError

from ..domain.errors import StorageError
from ..domain.id_index import WHOLE_KEY, IndexChanges, IndexEntry, id_key, id_of_key
from ..domain.messages import canonical_json
from ..domain.transcript import Transcript, transcript_id
from ..projections.fold import SessionFold
from ..projections.verify import Problem, VerifyReport, compare_session, quarantine_problems
from ..projections.views import Progress, TranscriptViews, ViewStatus
from . import arguments
from .event_log import TranscriptLog
from .storage import IndexReads

IDS_TABLE = "log_message_ids"  # the index's table (its version rows too)


class ViewMaintenance:
    """The view-keeping calls of `TranscriptStore` (a base class: it uses the store's views,
    log and retried `_read`)."""

    _views: TranscriptViews
    _log: TranscriptLog
    _read: Callable[..., Any]

    def rebuild_projections(self, progress: Progress | None = None) -> int:
        """Replay the whole log into fresh views and swap them in; return the events replayed.

        `progress(done, total)` is called after each batch. Readers see the old views until
        the new ones are complete. The write side's index of message ids is dropped too:
        the next write of each session indexes it anew from its log.
        """
        arguments.callback(progress, "progress")
        replayed = self._read(lambda: self._views.rebuild(progress), "rebuild the views")
        self._read(lambda: self._log.backend.reset_index(self._log), "drop the index")
        return replayed

    def catch_up_projections(self, progress: Progress | None = None) -> int:
        """Project the log entries the views have not seen yet; return how many."""
        arguments.callback(progress, "progress")
        return self._read(lambda: self._views.catch_up(progress), "catch the views up")

    def projection_status(self) -> list[ViewStatus]:
        """Per view: its version, tracked position against the log head, rows, quarantined."""
        return self._read(self._views.status)

    def follow_projections(
        self, stop: threading.Event, on_batch: Callable[[int], None] | None = None
    ) -> int:
        """Keep the views up to date as the log grows, until `stop` is set; return how many
        events were projected. `on_batch(count)` is called after each batch.

        On PostgreSQL it follows the log with the library's subscription (LISTEN/NOTIFY),
        projecting what has arrived in batches; on SQLite it polls. Every event is projected
        exactly once, whoever projects it (followers, or queries catching up).
        """
        arguments.stop_event(stop)
        arguments.callback(on_batch, "on_batch")
        try:
            return self._views.follow(stop, on_batch)
        except PersistenceError as error:
            raise StorageError(f"cannot follow the log: {error}") from error

    def following_projections(self) -> AbstractContextManager[None]:
        """Follow the log in a background thread while the block runs (see
        `follow_projections`); a failure of the follower is raised when the block ends."""
        return in_background(self.follow_projections)

    def verify_projections(self, progress: Progress | None = None) -> VerifyReport:
        """Diff every view against an independent fold of the log.

        Events that cannot be decoded or applied are left out of the fold, as the views
        leave them out: they are reported as quarantined. `progress(done, total)` is called
        with the sessions verified, first with 0.
        """
        arguments.callback(progress, "progress")

        def run() -> VerifyReport:
            with self._log.backend.reading_lightly(self._log):
                return verify(self._log, self._views, progress)

        return self._read(run, "verify the views")


def verify(
    log: TranscriptLog, views: TranscriptViews, progress: Progress | None = None
) -> VerifyReport:
    """Diff every view against an independent fold of the log (`progress(done, total)`: the
    sessions verified, first with 0).

    Events that cannot be decoded or applied are left out of the fold, as the views leave
    them out: they are reported as quarantined.
    """
    in_log = list(log.session_ids())
    known = set(in_log)
    sessions = [*in_log, *(s for s in views.session_ids() if s not in known)]
    problems = quarantine_problems(views.quarantined())
    for done, session_id in enumerate(sessions):
        if progress is not None:
            progress(done, len(sessions))
        fold = None
        in_index: list[Problem] = []
        if session_id in known:
            fold, in_index = fold_session(log, session_id)
        with views.rows(session_id) as rows:
            problems += compare_session(session_id, fold, rows)
        problems += in_index
    if progress is not None:
        progress(len(sessions), len(sessions))
    return VerifyReport(sessions=len(sessions), problems=problems)


def fold_session(log: TranscriptLog, session_id: str) -> tuple[SessionFold, list[Problem]]:
    """The fold of a session's readable events keeping digests (`message_digest`), read a
    page at a time; and the differences of its index of message ids (`IndexCheck`), read by
    look-ups in one snapshot taken before the log is read."""
    fold, whole = SessionFold(digest=message_digest), True
    with log.backend.reading_index(log, transcript_id(session_id)) as stored:
        index = IndexCheck(stored, fold)
        for page in log.readable_pages(session_id):
            events = [event for event in page if event is not None]
            whole = whole and len(events) == len(page)  # else quarantined: its writes are refused
            index.apply(events)  # before the fold applies them: it holds the earlier events' ids
            for event in events:
                fold.apply_readable(event)
        return fold, index.problems(session_id) if whole else []


def message_digest(value: Any) -> bytes:
    """What verify keeps of a message (with its id), or of a list of ids, and compares:
    BLAKE2b of its JSON with sorted keys."""
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # what orjson cannot write: an integer past 64 bits
        data = canonical_json(value)
    return hashlib.blake2b(data, digest_size=16).digest()


class IndexCheck:
    """A session's index of message ids as stored (`IndexReads`: looked up, never held
    whole), checked against what its events up to the index's version call for as they are
    read. It holds only the entries that differ from the index; the ids earlier events
    named are the fold's (applied up to the events checked)."""

    def __init__(self, stored: IndexReads, fold: SessionFold) -> None:
        self.stored = stored
        self.fold = fold
        self.version = stored.version()  # None: never indexed
        self.differs: dict[str, tuple[IndexEntry, IndexEntry | None]] = {}  # (called, stored)
        self.last = 0  # the version of the last event up to `version`

    def apply(self, events: list[Transcript.Event]) -> None:
        """Check the entries of the next events (those up to the index's version)."""
        if self.version is None:
            return
        events = [event for event in events if event.originator_version <= self.version]
        if not events:
            return
        changes = IndexChanges().apply(events)
        self.last = changes.version
        if changes.replace:  # nothing before is called for any more
            self.differs = {}
        found = self.stored.entries([i for i in changes.entries if i not in self.differs])
        for message_id, change in changes.entries.items():
            content = change.content_hash
            if message_id in self.differs:
                before, stored = self.differs.pop(message_id)
            else:
                stored = found.get(message_id)
                named = content is None and not changes.replace and message_id in self.fold.entries
                before = stored if named else None  # named before, as stored: it matched
            if content is None and before is not None:
                content = before.content_hash  # a rewind: the content is the same
            called = IndexEntry(content, change.rewound)
            if called != stored:
                self.differs[message_id] = (called, stored)

    def problems(self, session_id: str) -> list[Problem]:
        """Every difference; none for a session never indexed (its next write indexes it)."""
        if self.version is None:
            return []
        if self.last != self.version:
            detail = f"it reflects version {self.version}, the log's last is {self.last}"
            return [Problem(session_id, IDS_TABLE, "changed", session_id, detail)]
        problems = []
        for message_id, (called, found) in self.differs.items():
            if found is None:
                problems.append(Problem(session_id, IDS_TABLE, "missing", message_id))
            else:
                detail = f"expected {called}, stored {found}"
                problems.append(Problem(session_id, IDS_TABLE, "changed", message_id, detail))
        extra = [_named(key) for key in self._extra_keys()]
        return problems + [Problem(session_id, IDS_TABLE, "extra", key) for key in extra]

    def _extra_keys(self) -> list[bytes]:
        """The keys of the index no event up to its version names. The index holds one key
        for each id named that it holds: when it holds more, they are found in a read of its
        keys (in order, a page at a time)."""
        named = sum(1 for e in self.fold.entries.values() if e.appended_version <= self.version)
        missing = sum(1 for _, found in self.differs.values() if found is None)
        if self.stored.count() <= named - missing:
            return []
        long_ids = {id_key(i): i for i in self.fold.ids() if len(id_key(i)) > WHOLE_KEY}
        return [key for key in self.stored.keys() if not self._names(key, long_ids)]

    def _names(self, key: bytes, long_ids: dict[bytes, str]) -> bool:
        """Whether an event up to the index's version names the id of this key."""
        message_id = long_ids.get(key) or id_of_key(key)
        entry = None if message_id is None else self.fold.entries.get(message_id)
        return entry is not None and entry.appended_version <= (self.version or 0)


def _named(key: bytes) -> str:
    """An index key as a problem names it: the id it holds, else the key in hex."""
    message_id = id_of_key(key)
    return f"id key {key.hex()}" if message_id is None else message_id


@contextmanager
def in_background(follow: Callable[[threading.Event], int]) -> Iterator[None]:
    """Run `follow(stop)` in a thread while the block runs; its failure is raised at the end."""
    stop = threading.Event()
    failures: list[BaseException] = []

    def run() -> None:
        try:
            follow(stop)
        except BaseException as error:
            failures.append(error)

    follower = threading.Thread(target=run, name="transcripts-follower", daemon=True)
    follower.start()
    try:
        yield
    finally:
        stop.set()
        follower.join()
    if failures:
        raise failures[0]
