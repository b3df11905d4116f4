"""LangChain and LangGraph on a transcript store: `pip install 'transcript-store[langchain]'`.

- `TranscriptChatMessageHistory`: a `BaseChatMessageHistory` (`RunnableWithMessageHistory`).
- `TranscriptMiddleware`: mirrors a v1 agent's messages into the session of its thread_id.
- `TranscriptSummarizationMiddleware`: LangChain's summarization, committed as one compaction.
"""

from .history import TranscriptChatMessageHistory
from .middleware import TranscriptMiddleware
from .summarization import TranscriptSummarizationMiddleware

__all__ = [
    "TranscriptChatMessageHistory",
    "TranscriptMiddleware",
    "TranscriptSummarizationMiddleware",
]
