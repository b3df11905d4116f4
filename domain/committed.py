"""What a committed compaction names, in its stored formats, and what it supersedes.

A commit is fenced: no compaction or rewind landed between the attempt's beginning and its
commit, and appends only add to the end, so at the commit the attempt's snapshot is exactly
the first active messages. Version 2 of `CompactionCommitted` therefore names what it
replaces by a count, `replaced`: the first `replaced` active messages leave the context but
those it `kept`, and its `order` (kept and added ids) takes their place before the rest.
Its superseded ids are those replaced and not kept: an event of the same size whatever the
number of messages it supersedes. Version 1 listed them (`superseded`, in active order);
`upcast_v1_v2` turns a stored version 1 into version 2 as it is read. Version 3 adds the
caller's `metadata` about the compaction (what made it); `upcast_v2_v3` reads a version 2 as
one without (None).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def upcast_v1_v2(state: dict[str, Any]) -> None:
    """A version 1 event's state as version 2: the superseded ids become the count of the
    active messages it replaced (superseded and kept: its snapshot)."""
    superseded = state.pop("superseded")
    state["replaced"] = len(superseded) + len(state["kept"])


def upcast_v2_v3(state: dict[str, Any]) -> None:
    """A version 2 event's state as version 3: no metadata."""
    state["metadata"] = None


def superseded_ids(active: Sequence[str], replaced: int, kept: Iterable[str]) -> list[str]:
    """The ids a commit of `replaced` messages keeping `kept` supersedes, in active order,
    given the active ids it was applied to; ValueError if they are not active."""
    head = active[:replaced]
    keeping = set(kept)
    if len(head) != replaced:
        raise ValueError(
            f"compaction of messages that are not active: it replaces {replaced} messages, "
            f"{len(active)} are active"
        )
    if not keeping <= set(head):
        raise ValueError(
            "compaction of messages that are not active: it keeps messages it does not "
            f"replace: {sorted(keeping - set(head))}"
        )
    return [message_id for message_id in head if message_id not in keeping]
