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

from ..domain.attempted import exception_record, proposed_messages, unreadable
from ..domain.compaction import (
    CONFLICT,
    COUNT_TOKENS_ERROR,
    INVALID_REPLACEMENT,
    STORAGE_ERROR,
    SUMMARIZE_ERROR,
    CompactionRejected,
    would_supersede,
)
from ..domain.errors import SessionErasedError, StorageError, TranscriptError
from ..domain.messages import Message, safe_text
from ..domain.transcript import Transcript
from . import arguments
from .event_log import TranscriptLog
from .results import CompactionAttempt, CompactionResult

Summarize = Callable[[list[Message]], Sequence[object]]
CountTokens = Callable[[list[Message]], int]

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
                attempt, rejected.failure, rejected.error, reason, rejected.would_supersede,
                tokens, proposed=proposed_messages(snapshot, replacement),
            )  # fmt: skip
        except StorageError as error:
            superseded = would_supersede(snapshot, replacement)
            return self._record_failure(
                attempt, STORAGE_ERROR, str(error), reason, superseded, tokens,
                proposed=proposed_messages(snapshot, replacement), may_have_landed=True,
            )  # fmt: skip
        return CompactionResult(True, attempt.id, context.active(), version=version)

    def fail(
        self,
        attempt: CompactionAttempt,
        error: BaseException | str,
        *,
        failure: str,
        reason: str,
        replacement: object | None,
        tokens_before: int | None = None,
    ) -> CompactionResult:
        """Record a failure: what was proposed (`replacement`, if any, unless the summarizer
        raised: then it is only what the attempt would keep), the exception (if `error` is
        one)."""
        self._check_attempt(attempt)
        if not failure or not set(failure) <= _FAILURE_CODE_CHARS:
            raise TranscriptError(f"a failure code is lower_snake_case: {failure!r}")
        text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        snapshot = [message["id"] for message in attempt.messages]
        superseded, proposed = snapshot, None
        if replacement is not None:
            try:
                superseded = would_supersede(snapshot, replacement)
                if failure != SUMMARIZE_ERROR:
                    proposed = proposed_messages(snapshot, replacement)
            except Exception:  # a replacement that cannot even be read
                proposed = None if failure == SUMMARIZE_ERROR else [unreadable(replacement)]
        return self._record_failure(
            attempt, failure, text, reason, superseded, (tokens_before, None),
            proposed=proposed,
            exception=None if isinstance(error, str) else exception_record(error),
        )  # fmt: skip

    def run(
        self,
        attempt: CompactionAttempt,
        summarize: Summarize,
        *,
        reason: str,
        count_tokens: CountTokens | None = None,
    ) -> CompactionResult:
        """Call `summarize` on the attempt's snapshot and commit what it returns, with the
        tokens `count_tokens` counts before and after (if given). Never raises: what does
        not commit is recorded as failed — or, the session erased since the attempt began,
        answered unrecorded."""
        count = _Counter(count_tokens)
        try:
            try:
                before = count.copies_of(attempt.messages)
            except Exception as error:
                return self.fail(
                    attempt, error, failure=COUNT_TOKENS_ERROR, reason=reason, replacement=None
                )
            try:
                replacement = summarize([dict(message) for message in attempt.messages])
            except Exception as error:
                return self.fail(
                    attempt, error, failure=SUMMARIZE_ERROR, reason=reason, replacement=None,
                    tokens_before=before,
                )  # fmt: skip
            try:
                after = count(replacement)
            except Exception as error:
                return self.fail(
                    attempt, error, failure=COUNT_TOKENS_ERROR, reason=reason,
                    replacement=replacement, tokens_before=before,
                )  # fmt: skip
            try:
                return self.commit(
                    attempt, replacement, reason=reason, tokens_before=before, tokens_after=after
                )
            except SessionErasedError:
                raise
            except Exception as error:  # a replacement that cannot even be read
                return self.fail(
                    attempt, error, failure=INVALID_REPLACEMENT, reason=reason,
                    replacement=replacement, tokens_before=before,
                )  # fmt: skip
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
        proposed: list[dict[str, Any]] | None = None,
        exception: dict[str, str] | None = None,
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
                proposed=proposed,
                exception=exception,
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


class _Counter:
    """`count_tokens` called on messages (None without it), its answer checked."""

    def __init__(self, count_tokens: CountTokens | None) -> None:
        self._count = count_tokens

    def __call__(self, messages: object) -> int | None:
        if self._count is None or not arguments.is_list(messages):
            return None  # a replacement that is not a list: the commit refuses it
        counted = self._count(list(messages))  # type: ignore[call-overload]
        _check_tokens(counted)
        return counted

    def copies_of(self, messages: list[Message]) -> int | None:
        """The count of copies of `messages` (the function may change what it is given);
        none made without a function."""
        return None if self._count is None else self([dict(message) for message in messages])


def _check_tokens(*counts: object) -> None:
    for count in counts:
        if count is not None and (type(count) is not int or count < 0):
            raise TranscriptError(f"token counts are non-negative integers or None: {count!r}")
