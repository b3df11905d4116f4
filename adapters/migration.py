"""Copying a whole store to another one (another backend, or another cipher key).

The stored events are copied as they are (stream, version, topic and the encoded state,
which holds the timestamps and the message ids), in log order, 1,000 per transaction of the
target, so the target's log is the source's log: same order, same
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
from dataclasses import dataclass, field
from uuid import UUID

from .. import (
    EncryptionKeyError,
    LogRecord,
    NotAStoreError,
    StorageError,
    StoreConfig,
    StoredLog,
    TranscriptError,
    TranscriptStore,
    VerifyReport,
)

Progress = Callable[[int, int], None]
CHECKED = 1000  # events read back between progress calls
Same = Callable[[LogRecord, LogRecord], bool]


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
    check_progress: Progress | None = None,
    verify_progress: Progress | None = None,
) -> Migration:
    """Copy every event of the store at `source_url` into the store at `target_url`,
    then check the copy, rebuild the target's views and verify them.

    Each phase reports its own `progress(done, total)`: `progress` the events copied (log
    positions), `check_progress` the events read back, `rebuild_progress` the events
    replayed into the views, `verify_progress` the sessions verified.

    The cipher keys default to `$TRANSCRIPTS_CIPHER_KEY`; "" means a plain store."""
    source_config = StoreConfig.from_url(source_url, cipher_key=source_key)
    target_config = StoreConfig.from_url(target_url, cipher_key=target_key)
    if not (source_config.location.persistent and target_config.location.persistent):
        raise MigrationError("an in-memory store cannot be migrated from or to")
    if source_config.location.identity == target_config.location.identity:
        raise MigrationError(f"{source_config.url} and {target_config.url} are the same store")
    migration = Migration(source_config.url, target_config.url)
    with _open_source(source_config) as source, TranscriptStore(target_config) as target:
        copy = target.event_log
        before = copy.head()
        sessions = list(source.streams())
        migration.sessions = len(sessions)
        _check_target(copy, sessions, append=append)
        _check_key(source)
        head = source.head()
        recode = source_config.cipher_key != target_config.cipher_key
        for page in source.pages():
            copy.insert(copy.recoded(page, source) if recode else page)
            migration.events += len(page)
            if progress is not None:
                progress(page[-1].position, head)
        same = _decoded_equal(source, copy) if recode else _stored_equal
        migration.mismatches = _compare(source, copy, before, same, check_progress)
        target.rebuild_projections(rebuild_progress)
        migration.report = target.verify_projections(verify_progress)
    return migration


def _open_source(config: StoreConfig) -> StoredLog:
    try:
        return StoredLog.open(config)
    except NotAStoreError as error:
        raise MigrationError(str(error)) from None


def _check_target(target: StoredLog, sessions: list[tuple[UUID, str]], *, append: bool) -> None:
    """Refuse a target with events, unless appending sessions it does not have."""
    if not target.head():
        return
    if not append:
        raise MigrationError(
            f"{target.url} is not empty (its log has events): migrate into an empty "
            "store, or pass --append to add these sessions to it"
        )
    both = [session for stream, session in sessions if target.has_stream(stream)]
    if both:
        raise MigrationError(
            f"{len(both)} sessions are in both stores (e.g. {', '.join(both[:3])}): "
            "a session's events cannot be merged"
        )


def _check_key(source: StoredLog) -> None:
    """Raise EncryptionKeyError unless the source's first event decodes with its key."""
    for page in source.pages():
        try:
            source.decode(page[0])
        except StorageError:
            raise EncryptionKeyError(
                f"cannot read the events of {source.url} with the key given for it (none, or "
                "another): name the variable holding its key with --from-key-env"
            ) from None
        return


def _stored_equal(original: LogRecord, copy: LogRecord) -> bool:
    return (original.stream_id, original.version, original.topic, original.state) == (
        copy.stream_id,
        copy.version,
        copy.topic,
        copy.state,
    )


def _decoded_equal(source: StoredLog, target: StoredLog) -> Same:
    """Equal as events, whatever their encryption (a cipher's output differs every time)."""

    def same(original: LogRecord, copy: LogRecord) -> bool:
        return source.decode(original) == target.decode(copy)

    return same


def _records(log: StoredLog, after: int = 0) -> Iterator[LogRecord]:
    return (record for page in log.pages(after) for record in page)


def _compare(
    source: StoredLog, target: StoredLog, after: int, same: Same, progress: Progress | None
) -> list[str]:
    """Read the copy back: the target's events after `after` must be the source's log
    (`progress(position, head)` of the source, every CHECKED events)."""
    mismatches: list[str] = []
    copied = _records(target, after)
    head = source.head()
    if progress is not None:
        progress(0, head)
    for original in _records(source):
        if progress is not None and original.position % CHECKED == 0:
            progress(original.position, head)
        copy = next(copied, None)
        if copy is None:
            return [*mismatches, f"the copy ends before source event {original.position}"]
        if not same(original, copy):
            mismatches.append(
                f"source event {original.position} ({original.stream_id} "
                f"v{original.version}) differs in the copy (event {copy.position})"
            )
    extra = sum(1 for _ in copied)
    if extra:
        mismatches.append(f"the copy has {extra} events more than the source")
    return mismatches
