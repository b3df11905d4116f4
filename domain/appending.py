"""Triggering the `MessageAppended` events of an append in one go (a Transcript mixin).

An append of a hundred messages triggers a hundred events. `trigger_event` would build
each through the library's generic machinery, and `mutate` would check each against the
transcript's id and version; here each is built as that machinery builds it (the same
fields, in the same order: what is stored is the same) and applied as `mutate` applies it,
its checks holding by construction, and the version and time are set once.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from uuid import UUID

from .messages import Message, content_hash


class LeanAppends:
    """`MessageAppended` events triggered a batch at a time (a Transcript mixin)."""

    id: UUID
    version: int
    modified_on: datetime
    MessageAppended: type[Any]
    _pending_events: list[Any]

    def _trigger_appended(self, new: Mapping[str, tuple[Message, str | None]]) -> None:
        """`trigger_event(MessageAppended, …)` of each message id's (content, content hash
        or None: computed here), in order."""
        events, cls = [], self.MessageAppended
        for version, (message_id, (content, digest)) in enumerate(new.items(), self.version + 1):
            (event := object.__new__(cls)).__dict__.update(
                originator_id=self.id, originator_version=version,
                timestamp=cls.create_timestamp(), message_id=message_id, message=content,
                content_hash=digest or content_hash(content),
            )  # fmt: skip
            event.apply(self)
            events.append(event)
        if events:
            self.version, self.modified_on = events[-1].originator_version, events[-1].timestamp
            self._pending_events += events
