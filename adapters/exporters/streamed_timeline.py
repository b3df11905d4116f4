"""A session's timeline (see `timeline`) read as it is printed: messages a page at a time,
the compaction attempts (one short list), and the rewinds from the raw log in windows of
versions read only as far as the messages shown so far reach.

The items and their order are those of `timeline.timeline()`, which holds the whole
session in memory; here memory holds a page of messages, the attempts and the rewinds of
one window. `limit` shows the first N messages (and the attempts and rewinds before the
last of them), `tail` the last N (and the attempts and rewinds from the first of them on).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from ... import TranscriptStore
from .timeline import Boundary, Entry, Item, Rewind

WINDOW = 2000  # versions of the log scanned for rewinds at a time


def streamed_timeline(
    store: TranscriptStore,
    session_id: str,
    *,
    limit: int | None = None,
    tail: int | None = None,
) -> Iterator[Item]:
    """Every message, attempt and rewind in log order, as `timeline()`, read as needed.

    The session is read by the call (an unknown or erased one raises here)."""
    more = None if limit is None else limit + 1  # one more: whether any is left out
    entries = store.iter_history(session_id, versions=True, limit=more, tail=tail)
    attempts = deque(Boundary(attempt) for attempt in store.compactions(session_id))
    return _merged(entries, attempts, _Rewinds(store, session_id), limit, tail)


def _merged(
    entries: Iterator[dict[str, Any]],
    attempts: deque[Boundary],
    rewinds: _Rewinds,
    limit: int | None,
    tail: int | None,
) -> Iterator[Item]:
    shown = 0
    for entry in entries:
        if shown == limit:
            return  # messages after the last one shown are left out, and what is between
        item = _entry(entry)
        if shown == 0 and tail is not None:  # nothing before the first message shown
            while attempts and attempts[0].version < item.version:
                attempts.popleft()
            rewinds.skip_to(item.version)
        yield from _before(item.version, attempts, rewinds)
        yield item
        shown += 1
    if tail == 0 or limit == 0:
        return
    yield from _before(None, attempts, rewinds)


def _before(version: int | None, attempts: deque[Boundary], rewinds: _Rewinds) -> Iterator[Item]:
    """The attempts and rewinds up to `version` (a boundary goes before its own summaries),
    in version order; None: all that are left."""
    pending = rewinds.upto(version)
    while attempts and (version is None or attempts[0].version <= version):
        while pending and pending[0].version < attempts[0].version:
            yield pending.popleft()
        yield attempts.popleft()
    while pending:
        yield pending.popleft()


class _Rewinds:
    """The session's rewinds, read from the log a window of versions at a time."""

    def __init__(self, store: TranscriptStore, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self.scanned = 0  # versions up to this one were read
        self.found: deque[Rewind] = deque()

    def skip_to(self, version: int) -> None:
        """Leave out the rewinds before `version`, unread."""
        self.scanned = max(self.scanned, version - 1)

    def upto(self, version: int | None) -> deque[Rewind]:
        """The rewinds up to `version` not handed out yet (None: every one left)."""
        while version is None or self.scanned < version:
            until = None if version is None else self.scanned + WINDOW
            events = self.store.iter_events(
                self.session_id, types={"Rewound"}, after=self.scanned, until=until
            )
            self.found += (_rewind(event) for event in events)
            if until is None:
                break
            self.scanned = until
        taken: deque[Rewind] = deque()
        while self.found and (version is None or self.found[0].version <= version):
            taken.append(self.found.popleft())
        return taken


def _entry(entry: dict[str, Any]) -> Entry:
    versions = entry.pop("version"), entry.pop("rewound_version"), entry.pop("restored_version")
    version, rewound, restored = versions
    return Entry(version, entry, rewound if entry["rewound"] else None, restored)


def _rewind(event: dict[str, Any]) -> Rewind:
    data = event["data"]
    return Rewind(event["version"], event["at"], data["message_ids"], data["reason"])
