"""TranscriptSummarizationMiddleware: LangChain's summarization, committed through the store.

It decides when and what to summarize exactly as LangChain's `SummarizationMiddleware`
(the same trigger, the same cut-off that keeps AI/tool pairs together, the same summary
prompt and message), by its own methods. Then, instead of replacing the agent's messages
outright, it commits one compaction of the thread's session (`begin_compaction` →
summary → `commit_compaction`): the summarised messages are superseded by the summary,
fenced against concurrent compactions and rewinds, and the agent's new messages are the
session's active context as the store kept it. A summary that fails is recorded as a failed
compaction (`summarize_error`) and changes nothing: the agent goes on with its messages.
Both record the tokens before (and after) by the middleware's own `token_counter`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langchain.agents.middleware import AgentState, SummarizationMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from transcripts import CompactionAttempt, CompactionResult, TranscriptStore

from .messages import from_stored, to_stored
from .middleware import mirror, thread_of

logger = logging.getLogger(__name__)

REASON = "langchain summarization"


class TranscriptSummarizationMiddleware(SummarizationMiddleware):
    """`SummarizationMiddleware(model, **options)` whose summaries are compactions of the
    store session named by the graph's `thread_id`."""

    def __init__(
        self,
        model: str | BaseChatModel,
        *,
        store: TranscriptStore,
        source: str = "langgraph",
        **options: Any,
    ) -> None:
        super().__init__(model, **options)
        self.store = store
        self.source = source

    def before_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        plan = self._plan(state["messages"])
        if plan is None:
            return None
        to_summarize, everything = plan
        attempt = self._begin(thread_of(runtime), everything)
        try:
            summary = self._create_summary(to_summarize)
        except Exception as error:
            self._fail(attempt, to_summarize, error)
            return None
        return self._commit(attempt, to_summarize, summary)

    async def abefore_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        plan = self._plan(state["messages"])
        if plan is None:
            return None
        to_summarize, everything = plan
        attempt = await asyncio.to_thread(self._begin, thread_of(runtime), everything)
        try:
            summary = await self._acreate_summary(to_summarize)
        except Exception as error:
            await asyncio.to_thread(self._fail, attempt, to_summarize, error)
            return None
        return await asyncio.to_thread(self._commit, attempt, to_summarize, summary)

    def _plan(self, messages: list[AnyMessage]) -> tuple[list[AnyMessage], list[AnyMessage]] | None:
        """LangChain's decision: the messages to summarize (and all of them), or None."""
        self._ensure_message_ids(messages)
        if not self._should_summarize(messages, self.token_counter(messages)):
            return None
        cutoff = self._determine_cutoff_index(messages)
        if cutoff <= 0:
            return None
        to_summarize, _preserved = self._partition_messages(messages, cutoff)
        return to_summarize, messages

    def _begin(self, thread: str, messages: list[AnyMessage]) -> CompactionAttempt:
        """Every message stored (as the mirror does), then the attempt's snapshot."""
        mirror(self.store, thread, messages, source=self.source)
        return self.store.begin_compaction(thread)

    def _fail(
        self, attempt: CompactionAttempt, to_summarize: list[AnyMessage], error: Exception
    ) -> None:
        logger.warning("summary failed; the messages are kept: %r", error)
        would_keep = _without(attempt, to_summarize)
        self.store.fail_compaction(
            attempt,
            error,
            reason=REASON,
            replacement=would_keep,
            tokens_before=self._count(_read(attempt.messages)),
        )

    def _commit(
        self, attempt: CompactionAttempt, to_summarize: list[AnyMessage], summary: str
    ) -> dict[str, Any] | None:
        """The summary in place of the summarised messages, in one compaction; the agent's
        messages become the active context as stored, if it committed."""
        summarized = {message.id for message in to_summarize}
        first = next(
            (i for i, message in enumerate(attempt.messages) if message["id"] in summarized),
            0,
        )
        kept = _without(attempt, to_summarize)
        summary_messages = self._build_new_messages(summary)
        new = [to_stored(message, with_id=False) for message in summary_messages]
        position = sum(1 for message in attempt.messages[:first] if message["id"] not in summarized)
        replacement = [*kept[:position], *new, *kept[position:]]
        result = self.store.commit_compaction(
            attempt,
            replacement,
            reason=REASON,
            tokens_before=self._count(_read(attempt.messages)),
            tokens_after=self._count([*_read(kept), *summary_messages]),
        )
        if not result.committed:
            _warn(result)
            return None
        messages = [from_stored(message) for message in result.messages]
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *messages]}

    def _count(self, messages: list[AnyMessage]) -> int | None:
        """The tokens of messages by the middleware's `token_counter` (LangChain's
        approximate count unless given one); None if it gives no count."""
        counted = self.token_counter(messages)
        return counted if type(counted) is int and counted >= 0 else None


def _read(stored: list[dict[str, Any]]) -> list[AnyMessage]:
    return [from_stored(message) for message in stored]


def _without(attempt: CompactionAttempt, to_summarize: list[AnyMessage]) -> list[dict[str, Any]]:
    summarized = {message.id for message in to_summarize}
    return [message for message in attempt.messages if message["id"] not in summarized]


def _warn(result: CompactionResult) -> None:
    logger.warning("summary not committed (%s): %s", result.failure, result.error)
