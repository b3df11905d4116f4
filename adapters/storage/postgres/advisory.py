"""The store's advisory lock keys on PostgreSQL: 64 bits of a BLAKE2b digest, signed.

Processes of the store exclude each other by these keys (a session's writers, the views'
catch-up, the search index's, the tables' creation), so two releases that derived one key
differently would each take a lock the other never waits for: the keys are the same bytes
digested as in every release since each lock was introduced (a test holds their values).
"""

from __future__ import annotations

import hashlib
from uuid import UUID


def _digest_key(data: bytes) -> int:
    digest = hashlib.blake2b(data, digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def advisory_key(purpose: str, table: str) -> int:
    """The key of one purpose ("views", "search", "schema") on one store's tables."""
    return _digest_key(f"transcripts:{purpose}:{table}".encode())


def stream_lock_key(events_table: str, stream_id: UUID) -> int:
    """The key of one stream of a log (the lock of a session's writers)."""
    return _digest_key(events_table.encode() + stream_id.bytes)
