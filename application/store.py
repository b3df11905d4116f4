"""`TranscriptStore`: the service layer users call.

Commands run on the Transcript aggregate through the write side (`event_log.TranscriptLog`:
one transaction per call, retried under contention); compactions follow the workflow of
`compaction`, rewinds that of `rewind`. Queries read the views projected from the log (cost
O(result)); time travel and verification fold the log itself. `forget` erases a session:
its stream becomes one tombstone event, and every query but `sessions` and `events` raises
`SessionErasedError` for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from typing import Any, TypeVar

from eventsourcing.persistence import PersistenceError

from ..domain.errors import (
    SessionErasedError,
    SessionNotFoundError,
    StorageError,
    TranscriptError,
    VersionConflictError,
)
from ..domain.messages import Message, as_message_list, new_message_ids
from ..domain.transcript import Transcript
from ..projections.fold import SessionFold
from ..projections.projector import Projector
from ..projections.views import SearchQuery, TranscriptViews
from . import arguments
from .audit import AuditReads
from .changes import Change, Changes
from .compacting import CompactionCommands
from .compaction import Compactions
from .decoding import UNREADABLE, corrupt_session
from .event_log import TranscriptLog
from .explaining import explain
from .maintenance import ViewMaintenance
from .paging import PagedReads
from .results import Erasure, event_entry, history_entry
from .rewind import rewind_once
from .storage import StoreConfig
from .stored_log import StoredLog

T = TypeVar("T")


class TranscriptStore(CompactionCommands, PagedReads, ViewMaintenance, AuditReads):
    """An append-only, event-sourced store of agent transcripts."""

    def __init__(self, config: StoreConfig, *, projector: type[Projector] = Projector) -> None:
        if not (isinstance(projector, type) and issubclass(projector, Projector)):
            raise TranscriptError(f"projector must be a Projector class: {projector!r}")
        backend = config.backend
        backend.prepare(config)
        self.config = config
        self._backend = backend
        try:
            self._log = TranscriptLog(config)
            try:
                self._views: TranscriptViews = backend.open_views(self._log, projector)
                self._views.ensure_current()
                self._views.catch_up()
                self._log.views = self._views
            except BaseException:
                self._log.close()  # and its connections
                raise
        except PersistenceError as error:
            raise StorageError(f"cannot open {config.url}: {error}") from error
        self._compactions = Compactions(self._log, self)

    @classmethod
    def open(
        cls,
        url: str | None = None,
        *,
        lock_timeout: float | None = None,
        cipher_key: str | None = None,
        durability: str | None = None,
        projector: type[Projector] = Projector,
        create: bool = True,
    ) -> TranscriptStore:
        """Open a store: `memory://`, `sqlite:///file.db` (or a bare file path),
        `postgresql://…`, or the default file when None.

        `create=False` opens only a store that is there: else `StoreNotFoundError`, and
        nothing is created or written (no file, no folder, no table). With `create=True`
        (the default) a missing store is created.

        `cipher_key` (else `$TRANSCRIPTS_CIPHER_KEY`) encrypts the store at rest; a store
        created with a key opens only with that key. `durability` (else
        `$TRANSCRIPTS_DURABILITY`): "full" (the default: an acknowledged write is on disk)
        or "normal" (faster; the last writes can be lost on power loss, never half-applied).
        `projector` projects the views; a projector with older view versions than the ones
        stored rebuilds them on open.
        """
        config = StoreConfig.from_url(
            url, lock_timeout=lock_timeout, cipher_key=cipher_key, durability=durability
        )
        if not create:
            config.backend.check_store(config)
        return cls(config, projector=projector)

    def close(self) -> None:
        self._log.close()

    def __enter__(self) -> TranscriptStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def event_log(self) -> StoredLog:
        """The store's event log as stored, record by record (to copy a whole store)."""
        return StoredLog(self._log, self.config.url)

    def durability_settings(self) -> dict[str, str]:
        """The store's durability and how its log's writes commit, as the database reports
        it: SQLite's `journal_mode` and `synchronous`, PostgreSQL's `synchronous_commit`
        and `fsync`."""
        reported = self._read(lambda: self.config.backend.durability(self._log))
        return {"durability": self.config.settings.durability, **reported}

    # -- commands --------------------------------------------------------------------------

    def start(
        self,
        session_id: str,
        *,
        source: str = "api",
        model: str | None = None,
        parent_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Start a session. Starting it again with the same arguments is a no-op."""
        arguments = {"source": source, "model": model, "parent_id": parent_id}
        metadata = {} if metadata is None else metadata
        Transcript.start(session_id, metadata=metadata, **arguments)  # validates the arguments
        self._log.start(session_id, metadata=metadata, **arguments)

    def append(
        self,
        session_id: str,
        messages: Iterable[object],
        *,
        expected_version: int | None = None,
    ) -> list[Message]:
        """Store messages atomically; return each as stored, with its `id`.

        A rewound id given again with identical content is restored, at the end of the
        active context; a superseded one stays superseded (a no-op). With
        `expected_version`, see `VersionConflictError`: the call stores only if the session
        is still at that version (a call that stores nothing new succeeds as a no-op).
        """
        session_id, append = self._append_command(session_id, messages, True, expected_version)
        return self._log.write(session_id, append, appends=True)

    def sync(
        self,
        session_id: str,
        live_messages: Iterable[object],
        *,
        expected_version: int | None = None,
    ) -> list[Message]:
        """Store the messages of the agent's live list not stored yet; return the active list.

        Stored ids are skipped, active, superseded or rewound, so a stale list from before a
        compaction or a rewind never brings its messages back. `expected_version`: as
        `append`'s.
        """
        session_id, append = self._append_command(
            session_id, live_messages, False, expected_version
        )
        _, context = self._log.write_in_context(session_id, append, appends=True)
        return context.active()

    def write(
        self, session_id: str, changes: Sequence[Change], *, expected_version: int | None = None
    ) -> int:
        """Make `changes` (`Append`, `Rewind`, `Compact`, `SetState`) in order, in one
        transaction (see `changes`); return the session's version after them.
        `expected_version`: as `append`'s; a write holding a `Compact` needs one."""
        session_id = arguments.session_id(session_id)
        planned = Changes(session_id, changes, expected_version)
        return self._log.write(session_id, planned.apply, appends=planned.only_appends)

    def rewind(
        self, session_id: str, *, count: int | None = None, to: str | None = None, reason: str = ""
    ) -> list[Message]:
        """Take the last `count` active messages (all, if fewer), or every active message
        after the active message `to`, out of the active context in one Rewound event;
        return them as stored, in their active order (none to take: nothing is written).

        They stay in the history, marked rewound; `append` restores one. An attempt begun
        before the rewind fails to commit with `conflict`.
        """
        session_id = arguments.session_id(session_id)
        count, to = arguments.rewind_target(count, to)
        arguments.text(reason, "reason")
        rewound, context = rewind_once(self._log, session_id, count=count, to=to, reason=reason)
        return context.taken(rewound)

    def forget(self, session_id: str) -> Erasure:
        """Erase a session's content for good: its messages, compactions and metadata.

        Its events are replaced by one tombstone in one transaction, which keeps the session
        id, source, model, start time, erasure time and counts. Views that cannot take the
        tombstone (a damaged row of the session) are rebuilt. Erasing it again changes
        nothing (`already_erased`) but cleans the store's views and files again.
        """
        session_id = arguments.session_id(session_id)
        tombstone, already = self._log.erase(session_id)
        try:
            self._read(self._views.catch_up)
            if self._read(lambda: self._tombstone_left_out(tombstone)):
                self._read(self._views.rebuild, "rebuild the views")
            self._read(lambda: self._backend.scrub(self._log))
        except StorageError as error:
            raise StorageError(
                f"session {session_id!r} was erased, but the store could not be cleaned of "
                f"it: {error} (forget it again to retry)"
            ) from error
        return Erasure.of(tombstone, already_erased=already)

    def _tombstone_left_out(self, tombstone: Transcript.Erased) -> bool:
        """Whether the views quarantined the tombstone (a row of the session they could not
        read or delete): they still hold the session's rows, which only a rebuild from the
        log, where the tombstone is all that is left of it, takes out."""
        quarantined = self._views.quarantined(tombstone.originator_id.hex)
        return any(row.version == tombstone.originator_version for row in quarantined)

    # -- queries ---------------------------------------------------------------------------

    def version(self, session_id: str) -> int:
        """The session's version: that of its last event, as the log holds it now."""
        session_id = arguments.session_id(session_id)
        return self._log.last_version(session_id)

    def active(self, session_id: str) -> list[Message]:
        """The active context, in order, each message with its `id`."""
        session_id = arguments.session_id(session_id)
        return self._read(lambda: self._views.active(session_id))

    def active_at(self, session_id: str, version: int) -> list[Message]:
        """The active context right after event `version` of the session."""
        session_id = arguments.session_id(session_id)
        arguments.integer(version, "a version")
        return self._fold(session_id, lte=version).active()

    def history(self, session_id: str) -> list[dict[str, Any]]:
        """Every message ever stored, in order, with its active / superseded marks."""
        session_id = arguments.session_id(session_id)
        rows = self._read(lambda: self._views.history(session_id))
        return [history_entry(row) for row in rows]

    def compactions(self, session_id: str) -> list[dict[str, Any]]:
        """The compaction audit, oldest first: committed and failed attempts."""
        session_id = arguments.session_id(session_id)
        rows = self._read(lambda: self._views.attempts(session_id))
        return [row.as_audit_entry() for row in rows]

    def events(self, session_id: str) -> list[dict[str, Any]]:
        """The raw event log of a session."""
        session_id = arguments.session_id(session_id)
        return [event_entry(event) for event in self._log.session_events(session_id)]

    def sessions(self, *, source: str | None = None) -> list[dict[str, Any]]:
        """Every session (started with `source`, if given), in the order they were started."""
        source = arguments.optional_text(source, "source")
        return [row.as_summary() for row in self._read(lambda: self._views.sessions(source))]

    def session(self, session_id: str) -> dict[str, Any]:
        """One session's `sessions()` entry: its state and version are read together."""
        session_id = arguments.session_id(session_id)
        row = self._read(lambda: self._views.session(session_id))
        if row is None:
            raise SessionNotFoundError(session_id)
        return row.as_summary()

    def explain(self, session_id: str, message_id: str) -> dict[str, Any]:
        """Why a message is (or is not) in the active context: who added, superseded, rewound
        or restored it."""
        session_id = arguments.session_id(session_id)
        message_id = arguments.message_id(message_id)
        return self._read(lambda: explain(self._views, self._log, session_id, message_id))

    def search(
        self,
        query: str,
        *,
        session_id: str | None = None,
        role: str | None = None,
        active_only: bool = False,
        limit: int = 20,
    ) -> list[dict[str, Any]]:
        """Messages ever stored (superseded ones too) matching a full-text query, best first.

        Query syntax: words (matched by their stem), "phrases", AND / OR / NOT; on SQLite the
        rest of FTS5's (prefix*, NEAR), on PostgreSQL web-search syntax (-word).
        Each hit: session_id, message_id, role, active, snippet (matches in «guillemets»), rank.
        """
        query = arguments.text(query, "a search query")
        role = arguments.optional_text(role, "role")
        arguments.flag(active_only, "active_only")
        arguments.integer(limit, "a search limit")
        if session_id is not None and not arguments.storable_session_id(session_id):
            return []  # no session has that id
        search = SearchQuery(query, session_id, role, active_only, limit)
        hits = self._read(lambda: self._views.search(search))
        return [asdict(hit) for hit in hits]

    # -- internals -------------------------------------------------------------------------

    def _read(self, call: Callable[[], T], what: str = "read the store") -> T:
        """`call()`, retried while waiting can cure its storage trouble (typed if not)."""
        return self._log.calls.run(call, what)

    def _append_command(
        self, session_id: str, messages: Iterable[object], restore: bool, expected: int | None
    ) -> tuple[str, Callable[[Transcript], list[Message]]]:
        """The session id checked, and the command appending the messages to it (`restore`:
        a rewound id given again is restored; `expected`: the version to fence on)."""
        session_id = arguments.session_id(session_id)
        messages = as_message_list(messages)
        arguments.optional_integer(expected, "expected_version")
        fresh_ids = new_message_ids(len(messages))  # once: a retry stores the same

        def append(transcript: Transcript) -> list[Message]:
            version = transcript.version
            stored = transcript.append(messages, fresh_ids, restore=restore)
            if expected is not None and version != expected and transcript.version != version:
                # (a call storing nothing new is a no-op: also the retry of one that landed)
                raise VersionConflictError(session_id, expected, version)
            return stored

        return session_id, append

    def _fold(self, session_id: str, lte: int | None = None) -> SessionFold:
        try:
            fold = SessionFold.of(self._log.session_events(session_id, lte=lte))
        except SessionNotFoundError:
            self._read(lambda: self._views.check_session(session_id))  # erased: gone before
            raise
        except UNREADABLE as error:
            raise corrupt_session(session_id, error) from error
        if fold.erased_at is not None:
            raise SessionErasedError(session_id, fold.erased_at)
        return fold
