"""Messages for tests: factories of plain messages, tool exchanges and summaries, the trip
conversation, and the views of a list of messages the tests compare."""

from __future__ import annotations


def without_id(message: dict) -> dict:
    """A message's content: every key but `id`."""
    return {key: value for key, value in message.items() if key != "id"}
