"""transcript-store: an event-sourced store for LLM agent transcripts.

from transcripts import TranscriptStore

with TranscriptStore.open("sqlite:///transcripts.db") as store:
    store.start("session-1")
    store.append("session-1", [{"role": "user", "content": "hello"}])
"""

from .application.results import CompactionAttempt, CompactionResult, Erasure
from .application.store import TranscriptStore
from .domain.errors import (
    InvalidMessageError,
    MessageConflictError,
    SessionErasedError,
    SessionNotFoundError,
    StorageError,
    TranscriptError,
)

__all__ = [
    "CompactionAttempt",
    "CompactionResult",
    "Erasure",
    "InvalidMessageError",
    "MessageConflictError",
    "SessionErasedError",
    "SessionNotFoundError",
    "StorageError",
    "TranscriptError",
    "TranscriptStore",
]
