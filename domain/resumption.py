"""Resuming a transcript from its start alone, so that a first write need not replay it.

A transcript replayed from its events holds its whole state (`complete`). One resumed at its
last stored version with only its start applied (`resume`) holds what it learns: the events
applied since, and the stored facts of the ids commands were given. It appends, asking for
the facts of the ids it does not know (`IncompleteTranscript` naming them, answered by
`recall`), and asks to be replayed whole (`IncompleteTranscript` naming none) before any
other command. What it has of the active list and the tool-call facts is partial and left
unused: `CompactionCommitted.apply` does not cut it.

The ids an append makes up for messages given without one (`fresh_ids`) are taken to be
new: only an earlier try of the same call can have stored them, and the application
replays a transcript whole to retry a call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .messages import Message, content_hash, split_id


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
    resumed_at = 0  # the version it was resumed at: the views must hold the session to there
    recalled: frozenset[str] = frozenset()  # ids looked up and found not stored

    def resume(self, version: int) -> None:
        """Stand for the stored stream up to `version`, holding only what was applied (its
        start): the facts of stored messages are recalled as commands need them."""
        self.version = self.resumed_at = version
        self.complete = False

    def recall(
        self, message_ids: Iterable[str], stored: Mapping[str, tuple[Message, bool]]
    ) -> None:
        """Learn what the store holds of `message_ids`: `stored` maps those it stored to
        the message as stored and whether it is rewound, as of a moment no earlier than the
        version this transcript was resumed at (the events since are applied on top)."""
        absent = []
        for message_id in message_ids:
            found = stored.get(message_id)
            if found is None:
                absent.append(message_id)
                continue
            message, rewound = found
            _, content = split_id(message)
            self.hashes.setdefault(message_id, content_hash(content))
            if rewound:  # a restore since would have been applied: the id would be known
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
