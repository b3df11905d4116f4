"""The compaction workflow: an attempt begins on the active snapshot, then commits its
replacement or records why it could not.

A commit is one `CompactionCommitted` event, fenced against compactions committed since the
attempt began. Anything that stops it — a rejected replacement, `summarize` raising, the
write failing — is one `CompactionFailed` event that changes no active message: failures
never raise; they return `committed=False` with the active list as stored. Programming
errors (an attempt another store began, or one settled already) do raise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from uuid import uuid4

from ..domain.compaction import (
    CONFLICT,
    INVALID_REPLACEMENT,
    STORAGE_ERROR,
    SUMMARIZE_ERROR,
    CompactionRejected,
    would_supersede,
)
from ..domain.errors import SessionErasedError, StorageError, TranscriptError
from ..domain.messages import Message, safe_text
from ..domain.transcript import Transcript
from .event_log import TranscriptLog
from .results import CompactionAttempt, CompactionResult

Summarize = Callable[[list[Message]], Sequence[object]]

_FAILURE_CODE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


class Compactions:
    """The attempts of one store: `owner` begins them, and only its attempts settle here."""

    def __init__(self, log: TranscriptLog, owner: object) -> None:
        self._log = log
        self._owner = owner

    def begin(self, session_id: str, version: int, messages: list[Message]) -> CompactionAttempt:
        return CompactionAttempt(
            f"cmp_{uuid4().hex}", session_id, version, messages, store_token=self._owner
        )

    def commit(
        self,
        attempt: CompactionAttempt,
        replacement: Sequence[object],
        *,
        reason: str,
        tokens_before: int | None,
        tokens_after: int | None,
        metadata: dict[str, Any] | None = None,
    ) -> CompactionResult:
        self._check_attempt(attempt)
        _check_tokens(tokens_before, tokens_after)
        snapshot = [message["id"] for message in attempt.messages]
        tokens = (tokens_before, tokens_after)
        retried = _Retried()

        def commit(transcript: Transcript) -> int:
            if retried() and transcript.has_committed(attempt.id):
                return transcript.version  # an earlier try of this call landed
            transcript.commit_compaction(
                compaction_id=attempt.id,
                based_on_version=attempt.version,
                snapshot=snapshot,
                replacement=replacement,
                reason=reason,
                tokens_before=tokens_before,
                tokens_after=tokens_after,
                metadata=metadata,
            )
            return transcript.version

        try:
            version, context = self._log.write_in_context(attempt.session_id, commit)
        except CompactionRejected as rejected:
            return self._record_failure(
                attempt, rejected.failure, rejected.error, reason, rejected.would_supersede, tokens
            )
        except StorageError as error:
            superseded = would_supersede(snapshot, replacement)
            return self._record_failure(
                attempt, STORAGE_ERROR, str(error), reason, superseded, tokens, may_have_landed=True
            )
        return CompactionResult(True, attempt.id, context.active(), version=version)

    def fail(
        self,
        attempt: CompactionAttempt,
        error: BaseException | str,
        *,
        failure: str,
        reason: str,
        replacement: Sequence[object] | None,
    ) -> CompactionResult:
        self._check_attempt(attempt)
        if not failure or not set(failure) <= _FAILURE_CODE_CHARS:
            raise TranscriptError(f"a failure code is lower_snake_case: {failure!r}")
        text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        snapshot = [message["id"] for message in attempt.messages]
        superseded = snapshot if replacement is None else would_supersede(snapshot, replacement)
        return self._record_failure(attempt, failure, text, reason, superseded)

    def run(
        self, attempt: CompactionAttempt, summarize: Summarize, *, reason: str
    ) -> CompactionResult:
        """Call `summarize` on the attempt's snapshot and commit what it returns. Never
        raises: what does not commit is recorded as failed — or, the session erased since
        the attempt began, answered unrecorded."""
        try:
            try:
                replacement = summarize([dict(message) for message in attempt.messages])
            except Exception as error:
                return self.fail(
                    attempt, error, failure=SUMMARIZE_ERROR, reason=reason, replacement=None
                )
            try:
                return self.commit(
                    attempt, replacement, reason=reason, tokens_before=None, tokens_after=None
                )
            except SessionErasedError:
                raise
            except Exception as error:  # a replacement that cannot even be read
                return self.fail(
                    attempt, error, failure=INVALID_REPLACEMENT, reason=reason, replacement=None
                )
        except SessionErasedError as erased:
            return CompactionResult(False, attempt.id, [], CONFLICT, f"{erased}: nothing recorded")

    def _record_failure(
        self,
        attempt: CompactionAttempt,
        failure: str,
        error: str,
        reason: str,
        would_supersede: Sequence[str],
        tokens: tuple[int | None, int | None] = (None, None),
        *,
        may_have_landed: bool = False,
    ) -> CompactionResult:
        """Record a failure. `may_have_landed`: the commit failed for storage trouble, and
        may have committed all the same (the attempt is then reported committed)."""
        error = safe_text(error)
        retried = _Retried()

        def record(transcript: Transcript) -> tuple[bool, int]:
            """Record the failure; whether the attempt committed instead, and the version."""
            if may_have_landed and transcript.has_committed(attempt.id):
                return True, transcript.version
            if retried() and transcript.has_settled(attempt.id):
                return False, transcript.version  # an earlier try of this call landed
            transcript.fail_compaction(
                compaction_id=attempt.id,
                based_on_version=attempt.version,
                failure=failure,
                error=error,
                reason=reason,
                would_supersede=would_supersede,
                tokens_before=tokens[0],
                tokens_after=tokens[1],
            )
            return False, transcript.version

        try:
            (committed, version), context = self._log.write_in_context(attempt.session_id, record)
        except StorageError as unrecorded:
            error = f"{error} (and the failure could not be recorded: {unrecorded})"
            return CompactionResult(False, attempt.id, self._active(attempt), failure, error)
        if committed:
            return CompactionResult(True, attempt.id, context.active(), version=version)
        return CompactionResult(False, attempt.id, context.active(), failure, error, version)

    def _active(self, attempt: CompactionAttempt) -> list[Message]:
        """The session's active list as the log holds it (nothing could be written), else
        (unreadable) the attempt's snapshot."""
        try:
            return self._log.context(attempt.session_id).active()
        except StorageError:
            return [dict(message) for message in attempt.messages]

    def _check_attempt(self, attempt: CompactionAttempt) -> None:
        if not isinstance(attempt, CompactionAttempt) or attempt.store_token is not self._owner:
            raise TranscriptError("this compaction attempt was not begun by this store")


class _Retried:
    """Called once per try of a command: False the first time, True after."""

    def __init__(self) -> None:
        self.tries = 0

    def __call__(self) -> bool:
        self.tries += 1
        return self.tries > 1


def _check_tokens(*counts: object) -> None:
    for count in counts:
        if count is not None and (type(count) is not int or count < 0):
            raise TranscriptError(f"token counts are non-negative integers or None: {count!r}")
