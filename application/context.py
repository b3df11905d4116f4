"""A session's active context followed through its events: what a write hands back.

A write that returns the active list (`sync`, a compaction) or the messages it took out (a
rewind) reads them inside its own transaction, once its events are stored and before its
commit, so that a write that committed never fails to answer: the views as they are then
(holding the write, or behind while another process holds them) give the context at some
version, and the log's events after it — the write's own among them — are applied on top.
Where the views cannot give it, the session's whole log is read instead, after the commit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..domain.messages import Message, with_id
from ..domain.transcript import Transcript


class Context:
    """The active messages at `version`, and every message active at any version since (and
    those `known` besides)."""

    def __init__(
        self, version: int = 0, active: Iterable[Message] = (), known: Iterable[Message] = ()
    ) -> None:
        self.version = version
        self.messages: dict[str, Message] = {message["id"]: message for message in active}
        self.active_ids = list(self.messages)
        self.messages |= {message["id"]: message for message in known}

    @classmethod
    def of(cls, events: Iterable[Transcript.Event]) -> Context:
        context = cls()
        for event in events:
            context.apply(event)
        return context

    def apply(self, event: Transcript.Event) -> None:
        if isinstance(event, Transcript.MessageAppended):  # new, or a restore
            self.messages[event.message_id] = with_id(event.message_id, event.message)
            self.active_ids.append(event.message_id)
        elif isinstance(event, Transcript.CompactionCommitted):
            for new in event.added:
                self.messages[new["id"]] = with_id(new["id"], new["message"])
            self.active_ids = [*event.order, *self.active_ids[event.replaced :]]
        elif isinstance(event, Transcript.Rewound):
            gone = set(event.message_ids)
            self.active_ids = [i for i in self.active_ids if i not in gone]
        elif isinstance(event, (Transcript.Started, Transcript.Erased)):
            self.messages, self.active_ids = {}, []
        self.version = event.originator_version

    def knows(self, message_ids: Iterable[str]) -> bool:
        return all(message_id in self.messages for message_id in message_ids)

    def active(self) -> list[Message]:
        return self.taken(self.active_ids)

    def taken(self, message_ids: Sequence[str]) -> list[Message]:
        """Messages active at some version since, by id, in the order given."""
        return [dict(self.messages[message_id]) for message_id in message_ids]
