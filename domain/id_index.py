"""The write side's index of message ids: what the log stores under each id of a stream.

Every write keeps it in the transaction that stores its events, so that a process's first
write to a session decides from it — which ids are stored, under what content, which are
rewound — without replaying the session's events, and without asking a view. Per stream it
holds the version it reflects, and per message id ever stored the content hash the log holds
for it and whether it is rewound (superseded ids are stored, not rewound: appending one again
is a no-op). `IndexChanges` is what events do to it, as the aggregate applies them: the last
event of an id decides.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from .transcript import Transcript

WHOLE_KEY = 64  # bytes: an id of up to this many UTF-8 bytes is its own key
KEY_VERSION = "2"  # of `id_key`: 1 (none recorded) was the SHA-256 of every id


def id_key(message_id: str) -> bytes:
    """How the index knows a message id, in the ids' order, so that time-ordered ids land at
    the end of the index: its UTF-8 bytes when they are at most `WHOLE_KEY`, else their first
    `WHOLE_KEY` followed by their SHA-256 (an id of 1,024 characters of any text fits no
    database's key). The lengths tell the two kinds apart: no whole id equals a hashed one."""
    data = message_id.encode("utf-8", "surrogatepass")
    if len(data) <= WHOLE_KEY:
        return data
    return data[:WHOLE_KEY] + hashlib.sha256(data).digest()


def id_of_key(key: bytes) -> str | None:
    """The message id a key holds whole; None for a long id's (hashed) key, or a damaged one."""
    if len(key) > WHOLE_KEY:
        return None
    try:
        return key.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None


class IndexEntry(NamedTuple):
    content_hash: str | None  # None: unchanged (a rewind marks an id stored before)
    rewound: bool


class IndexState(NamedTuple):
    """What a write reads first of its stream: the version the index reflects (None: the
    stream was never indexed), and the first event whose topic cannot be read (None: none)."""

    version: int | None
    unreadable: int | None


@dataclass
class IndexChanges:
    """What a run of a stream's events does to its index."""

    version: int = 0  # the stream's version once applied
    entries: dict[str, IndexEntry] = field(default_factory=dict)
    replace: bool = False  # the stream's earlier entries go first (an erasure, a re-index)

    def apply(self, events: Iterable[Transcript.Event]) -> IndexChanges:
        for event in events:
            if isinstance(event, Transcript.MessageAppended):  # new, or a restore
                self.entries[event.message_id] = IndexEntry(event.content_hash, False)
            elif isinstance(event, Transcript.CompactionCommitted):
                for new in event.added:
                    self.entries[new["id"]] = IndexEntry(new["content_hash"], False)
            elif isinstance(event, Transcript.Rewound):
                for message_id in event.message_ids:
                    known = self.entries.get(message_id)
                    self.entries[message_id] = IndexEntry(known and known.content_hash, True)
            elif isinstance(event, Transcript.Erased):
                self.entries, self.replace = {}, True
            self.version = event.originator_version
        return self

    @classmethod
    def of(cls, events: Iterable[Transcript.Event]) -> IndexChanges:
        return cls().apply(events)

    @classmethod
    def whole(cls, transcript: Transcript) -> IndexChanges:
        """The whole index of a transcript replayed from its events, in place of any."""
        entries = {
            message_id: IndexEntry(digest, message_id in transcript.rewound)
            for message_id, digest in transcript.hashes.items()
        }
        return cls(transcript.version, entries, replace=True)
