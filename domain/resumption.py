"""Resuming a transcript from its start alone, so that a first write need not replay it.

A transcript replayed from its events holds its whole state (`complete`). One resumed at a
stored version with only its start applied (`resume`: the version the log's index of message
ids reflects, see `domain.id_index`) holds what it learns: the events applied since, and the
index entries of the ids commands were given. It appends, asking for the entries of the ids
it does not know (`IncompleteTranscript` naming them, answered by `recall`), and asks to be
replayed whole (`IncompleteTranscript` naming none) before any other command. What it has
of the active list and the tool-call facts is partial and left unused:
`CompactionCommitted.apply` does not cut it.

The ids an append makes up for messages given without one (`fresh_ids`) are taken to be
new: only an earlier try of the same call can have stored them, and the application
replays a transcript whole to retry a call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .id_index import IndexEntry


class IncompleteTranscript(Exception):
    """A resumed transcript cannot run the command yet: it needs the stored facts of
    `message_ids` (see `Resumable.recall`), or, when None, its whole state (a replay).
    A signal to the application, never an error for users."""

    def __init__(self, message_ids: list[str] | None = None) -> None:
        super().__init__(message_ids)
        self.message_ids = message_ids


class Resumable:
    """The transcript's state as far as resuming it goes."""

    version: int
    hashes: dict[str, str]
    rewound: set[str]
    complete = True  # False when resumed
    recalled: frozenset[str] = frozenset()  # ids looked up and found not stored
    # Versions of events the views quarantined that this transcript read intact (replayed).
    vetted: frozenset[int] = frozenset()

    def resume(self, version: int) -> None:
        """Stand for the stored stream up to `version`, holding only what was applied (its
        start): the facts of stored messages are recalled as commands need them."""
        self.version = version
        self.complete = False

    def recall(self, message_ids: Iterable[str], stored: Mapping[str, IndexEntry]) -> None:
        """Learn what the log holds of `message_ids`: `stored` maps those it stored to their
        index entries, as of a version no earlier than the one this transcript was resumed
        at (the events since are applied on top)."""
        absent = []
        for message_id in message_ids:
            found = stored.get(message_id)
            if found is None or found.content_hash is None:
                absent.append(message_id)
                continue
            self.hashes.setdefault(message_id, found.content_hash)
            if found.rewound:  # a restore since would have been applied: the id would be known
                self.rewound.add(message_id)
        self.recalled = self.recalled.union(absent)

    def _check_complete(self) -> None:
        if not self.complete:
            raise IncompleteTranscript()

    def _check_known(self, message_ids: Iterable[str]) -> None:
        if not self.complete:
            unknown = [i for i in message_ids if i not in self.hashes and i not in self.recalled]
            if unknown:
                raise IncompleteTranscript(unknown)
