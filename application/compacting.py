"""The compaction commands of `TranscriptStore`: begin an attempt on the active snapshot,
commit its replacement or record why not, or all of it in one call (`compact`); the
workflow itself is `compaction.Compactions`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..domain.compaction import SUMMARIZE_ERROR
from ..domain.errors import TranscriptError
from ..projections.views import TranscriptViews
from . import arguments
from .compaction import Compactions, CountTokens, Summarize
from .results import CompactionAttempt, CompactionResult


class CompactionCommands:
    """A base class of `TranscriptStore`: it uses the store's views, compactions and
    retried `_read`."""

    _views: TranscriptViews
    _compactions: Compactions
    _read: Callable[..., Any]

    def begin_compaction(self, session_id: str) -> CompactionAttempt:
        """Take the active snapshot a compaction is computed against."""
        session_id = arguments.session_id(session_id)
        version, messages = self._read(lambda: self._views.snapshot(session_id))
        return self._compactions.begin(session_id, version, messages)

    def commit_compaction(
        self,
        attempt: CompactionAttempt,
        replacement: Sequence[object],
        *,
        reason: str = "",
        tokens_before: int | None = None,
        tokens_after: int | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> CompactionResult:
        """Replace the attempt's snapshot with `replacement`, or record why it cannot.
        `metadata`: a JSON object of the caller's about the compaction (shown in the audit)."""
        arguments.text(reason, "reason")
        arguments.optional_integer(tokens_before, "tokens_before")
        arguments.optional_integer(tokens_after, "tokens_after")
        metadata = arguments.optional_json_object(metadata, "metadata")
        return self._compactions.commit(
            attempt, replacement, reason=reason, tokens_before=tokens_before,
            tokens_after=tokens_after, metadata=metadata,
        )  # fmt: skip

    def fail_compaction(
        self,
        attempt: CompactionAttempt,
        error: BaseException | str,
        *,
        failure: str = SUMMARIZE_ERROR,
        reason: str = "",
        replacement: Sequence[object] | None = None,
        tokens_before: int | None = None,
    ) -> CompactionResult:
        """Record that an attempt failed; nothing else changes.

        The audit lists the snapshot ids the attempt would have superseded: all of them, or,
        when the `replacement` that could not be committed is given, the ones it does not
        keep; the attempt keeps its new messages as `proposed` (not for a `summarize_error`:
        a summarizer that raised proposed nothing, its replacement is what it would keep).
        An exception `error` is kept with its traceback. `tokens_before`: the snapshot's.
        """
        if not isinstance(error, (BaseException, str)):
            raise TranscriptError(f"error must be an exception or a string: {error!r}")
        if replacement is not None and not arguments.is_list(replacement):
            raise TranscriptError(f"a replacement is a list of messages or None: {replacement!r}")
        arguments.text(failure, "failure")
        arguments.text(reason, "reason")
        arguments.optional_integer(tokens_before, "tokens_before")
        return self._compactions.fail(
            attempt, error, failure=failure, reason=reason, replacement=replacement,
            tokens_before=tokens_before,
        )  # fmt: skip

    def compact(
        self,
        session_id: str,
        summarize: Summarize,
        *,
        reason: str = "",
        count_tokens: CountTokens | None = None,
    ) -> CompactionResult:
        """Begin a compaction, call `summarize(active_messages)`, commit its replacement.
        `count_tokens(messages) -> int` (optional) fills `tokens_before` (the snapshot's)
        and `tokens_after` (the replacement's), also on a failed attempt.

        Whatever `summarize` raises is recorded as a `summarize_error` (its exception and
        traceback kept) and changes nothing; `count_tokens` raising, a `count_tokens_error`.
        Storage trouble is never raised once the attempt began: it is a `storage_error`
        failure (StorageError only if the active context cannot be read to begin with).
        """
        arguments.function(summarize, "summarize")
        if count_tokens is not None:
            arguments.function(count_tokens, "count_tokens")
        arguments.text(reason, "reason")
        attempt = self.begin_compaction(session_id)
        return self._compactions.run(attempt, summarize, reason=reason, count_tokens=count_tokens)
