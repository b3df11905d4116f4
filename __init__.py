"""transcript-store: an event-sourced store for LLM agent transcripts.

from transcripts import TranscriptStore

with TranscriptStore.open("sqlite:///transcripts.db") as store:
    store.start("session-1")
    store.append("session-1", [{"role": "user", "content": "hello"}])
"""

from .application.changes import Append, Compact, Rewind, SetState
from .application.results import CompactionAttempt, CompactionResult, Erasure
from .application.storage import StoreConfig
from .application.store import TranscriptStore
from .application.stored_log import LogRecord, StoredLog
from .domain.errors import (
    CompactionNotFoundError,
    EncryptionKeyError,
    InvalidMessageError,
    InvalidSearchError,
    MessageConflictError,
    MessageNotFoundError,
    NotAStoreError,
    SessionErasedError,
    SessionNotFoundError,
    StorageError,
    StoreNotFoundError,
    TranscriptError,
    VersionConflictError,
)
from .domain.messages import MAX_ID_LENGTH
from .projections.verify import Problem, VerifyReport
from .projections.views import ViewStatus

__all__ = [
    "MAX_ID_LENGTH",
    "Append",
    "Compact",
    "CompactionAttempt",
    "CompactionNotFoundError",
    "CompactionResult",
    "EncryptionKeyError",
    "Erasure",
    "InvalidMessageError",
    "InvalidSearchError",
    "LogRecord",
    "MessageConflictError",
    "MessageNotFoundError",
    "NotAStoreError",
    "Problem",
    "Rewind",
    "SessionErasedError",
    "SessionNotFoundError",
    "SetState",
    "StorageError",
    "StoreConfig",
    "StoreNotFoundError",
    "StoredLog",
    "TranscriptError",
    "TranscriptStore",
    "VerifyReport",
    "VersionConflictError",
    "ViewStatus",
]
