"""Copying a whole store to another one (another backend, or another cipher key).

The stored events are copied as they are (originator id, version, topic and the encoded
state, which holds the timestamps and the message ids), in notification order, 1,000 per
transaction of the target, so the target's log is the source's log: same order, same
sessions, same ids, same times. The source is only read (its views are not touched). At the
end the copy is read back and compared with the source event by event, the target's views
are rebuilt from it, and verified against an independent fold of its log.

Between stores with different cipher keys (a plain store into an encrypted one, or a key
rotation) each event is decoded with the source's key and encoded with the target's, and
the check compares the decoded events.

A target that has events already is refused, unless `append` is given and no session is in
both stores (a session's events cannot be merged). A copy that fails half-way leaves the
events copied so far in the target: drop the target (or start from a fresh one) and run
again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from uuid import UUID

from eventsourcing.persistence import (
    ApplicationRecorder,
    Notification,
    PersistenceError,
    ProgrammingError,
    StoredEvent,
)

from ..application.event_log import TranscriptLog
from ..application.storage import StoreConfig
from ..application.store import TranscriptStore
from ..domain.errors import EncryptionKeyError, NotAStoreError, StorageError, TranscriptError
from ..domain.transcript import Transcript
from ..projections.verify import VerifyReport

COPY_BATCH = 1000
Progress = Callable[[int, int], None]


class MigrationError(TranscriptError):
    """The store cannot be copied there (nothing was copied)."""


@dataclass
class Migration:
    """What a migration did."""

    source: str
    target: str
    events: int = 0
    sessions: int = 0
    report: VerifyReport | None = None
    mismatches: list[str] = field(default_factory=list)  # events that differ after the copy

    @property
    def ok(self) -> bool:
        return not self.mismatches and self.report is not None and self.report.ok


def migrate(
    source_url: str,
    target_url: str,
    *,
    append: bool = False,
    source_key: str | None = None,
    target_key: str | None = None,
    progress: Progress | None = None,
    rebuild_progress: Progress | None = None,
) -> Migration:
    """Copy every event of the store at `source_url` into the store at `target_url`,
    then check the copy, rebuild the target's views and verify them.

    The cipher keys default to `$TRANSCRIPTS_CIPHER_KEY`; "" means a plain store."""
    source_config = StoreConfig.from_url(source_url, cipher_key=source_key)
    target_config = StoreConfig.from_url(target_url, cipher_key=target_key)
    if "memory://" in (source_config.url, target_config.url):
        raise MigrationError("an in-memory store cannot be migrated from or to")
    if _same_store(source_config, target_config):
        raise MigrationError(f"{source_config.url} and {target_config.url} are the same store")
    migration = Migration(source_config.url, target_config.url)
    with _source_log(source_config) as source, TranscriptStore(target_config) as target:
        target_log = target._log
        before = target_log.recorder.max_notification_id() or 0
        sessions = list(_started(source))
        migration.sessions = len(sessions)
        if before and not append:
            raise MigrationError(
                f"{target_config.url} is not empty (its log has events): migrate into an empty "
                "store, or pass --append to add these sessions to it"
            )
        if before:
            both = [
                session
                for originator_id, session in sessions
                if target_log.recorder.select_events(originator_id, limit=1)
            ]
            if both:
                raise MigrationError(
                    f"{len(both)} sessions are in both stores (e.g. {', '.join(both[:3])}): "
                    "a session's events cannot be merged"
                )
        _check_key(source, source_config)
        head = source.recorder.max_notification_id() or 0
        recode = source_config.cipher_key != target_config.cipher_key
        for page in _pages(source.recorder):
            stored = [_as_stored(n) for n in page]
            if recode:
                stored = [
                    target_log.mapper.to_stored_event(source.mapper.to_domain_event(event))
                    for event in stored
                ]
            target_log.recorder.insert_events(stored)
            migration.events += len(page)
            if progress is not None:
                progress(page[-1].id, head)
        same: Same = _decoded_equal(source, target_log) if recode else _stored_equal
        migration.mismatches = _compare(source.recorder, target_log.recorder, before, same)
        target.rebuild_projections(rebuild_progress)
        migration.report = target.verify_projections()
    return migration


def _check_key(source: TranscriptLog, config: StoreConfig) -> None:
    """Raise EncryptionKeyError unless the source's first event decodes with its key."""
    first = source.recorder.select_notifications(start=None, limit=1)
    try:
        for notification in first:
            source.mapper.to_domain_event(_as_stored(notification))
    except Exception:
        raise EncryptionKeyError(
            f"cannot read the events of {config.url} with the key given for it (none, or "
            "another): name the variable holding its key with --from-key-env"
        ) from None


def _same_store(a: StoreConfig, b: StoreConfig) -> bool:
    return a.location.identity == b.location.identity


@contextmanager
def _source_log(config: StoreConfig) -> Iterator[TranscriptLog]:
    """The source's log through the library alone: nothing of the source is written."""
    try:
        config.backend.check_store(config)
    except NotAStoreError as error:
        raise MigrationError(str(error)) from None
    try:
        log = TranscriptLog(config)
    except PersistenceError as error:
        raise StorageError(f"cannot open {config.url}: {error}") from error
    try:
        try:
            log.recorder.max_notification_id()
        except ProgrammingError:  # no events table
            raise MigrationError(f"{config.url} is not a transcript store: it has no log") from None
        yield log
    finally:
        log.close()


def _pages(recorder: ApplicationRecorder, after: int = 0) -> Iterator[list[Notification]]:
    """The log in notification order, a batch at a time (never all of it in memory)."""
    position = after
    while True:
        page = list(recorder.select_notifications(position, COPY_BATCH, inclusive_of_start=False))
        if not page:
            return
        yield page
        position = page[-1].id


def _started(log: TranscriptLog) -> Iterator[tuple[UUID, str]]:
    """(transcript id, session id) of every session in a log, by its first event (Started, or
    the Erased tombstone of a forgotten session)."""
    position = 0
    while True:
        page = log.recorder.select_notifications(
            position,
            COPY_BATCH,
            topics=[Transcript.Started.TOPIC, Transcript.Erased.TOPIC],
            inclusive_of_start=False,
        )
        for notification in page:
            try:
                name = str(log.mapper.to_domain_event(notification).session_id)  # type: ignore[attr-defined]
            except Exception:  # a corrupt event is copied as it is; its id names it
                name = str(notification.originator_id)
            yield _uuid(notification.originator_id), name
        if len(page) < COPY_BATCH:
            return
        position = page[-1].id


def _uuid(value: UUID | str) -> UUID:
    return value if isinstance(value, UUID) else UUID(str(value))


def _as_stored(notification: Notification) -> StoredEvent:
    return StoredEvent(
        originator_id=_uuid(notification.originator_id),
        originator_version=notification.originator_version,
        topic=notification.topic,
        state=bytes(notification.state),
    )


Same = Callable[[Notification, Notification], bool]


def _stored_equal(original: Notification, copy: Notification) -> bool:
    return _key(original) == _key(copy)


def _decoded_equal(source: TranscriptLog, target: TranscriptLog) -> Same:
    """Equal as events, whatever their encryption (a cipher's output differs every time)."""

    def same(original: Notification, copy: Notification) -> bool:
        decoded = source.mapper.to_domain_event(_as_stored(original))
        return decoded == target.mapper.to_domain_event(_as_stored(copy))

    return same


def _key(notification: Notification) -> tuple[str, int, str, bytes]:
    return (
        str(notification.originator_id),
        notification.originator_version,
        notification.topic,
        bytes(notification.state),
    )


def _compare(
    source: ApplicationRecorder, target: ApplicationRecorder, after: int, same: Same
) -> list[str]:
    """Read the copy back: the target's events after `after` must be the source's log."""
    mismatches: list[str] = []
    copied = (n for page in _pages(target, after) for n in page)
    for page in _pages(source):
        for original in page:
            copy = next(copied, None)
            if copy is None:
                return [*mismatches, f"the copy ends before source event {original.id}"]
            if not same(original, copy):
                mismatches.append(
                    f"source event {original.id} ({original.originator_id} "
                    f"v{original.originator_version}) differs in the copy (event {copy.id})"
                )
    extra = sum(1 for _ in copied)
    if extra:
        mismatches.append(f"the copy has {extra} events more than the source")
    return mismatches
