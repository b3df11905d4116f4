"""Reads sent before they are asked for, in a log transaction's pipeline.

A log transaction runs in psycopg's pipeline mode: statements go out when a result is
waited for, so reads sent together cost one round trip. A write knows, before the first of
them, the reads it will make (its session's index state and events, the views' lock and the
session's view rows): `send` puts each on a cursor of its own, and when the same statement
with the same parameters is executed later, `take` gives that cursor, its result read in the
round trip of the first read waited for. A read is taken once, and none is served after the
transaction wrote through the views' cursor (whose writes could change what it read).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import psycopg

Query = Any  # a str, or the library's composed SQL (reused objects: keyed by identity)


def _key(query: Query, params: Sequence[Any] | None) -> Hashable | None:
    try:
        key = (query if isinstance(query, str) else id(query), tuple(params or ()))
        hash(key)
    except TypeError:  # a list parameter: never sent ahead
        return None
    return key


class ReadAhead:
    """The reads a transaction sent ahead, by statement and parameters."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection = connection
        self._sent: dict[Hashable, psycopg.Cursor[Any]] = {}

    def send(
        self,
        query: Query,
        params: Sequence[Any] | None = None,
        *,
        configure: Callable[[psycopg.Cursor[Any]], None] | None = None,
    ) -> None:
        """Execute a read now, on its own cursor (`configure`d first); its result is waited
        for when taken (or when any other result is)."""
        key = _key(query, params)
        if key is not None and key not in self._sent:
            cursor = self.connection.cursor()
            if configure is not None:
                configure(cursor)
            cursor.execute(query, params)  # prepared as psycopg does, after a few
            self._sent[key] = cursor

    def take(self, query: Query, params: Sequence[Any] | None = None) -> psycopg.Cursor[Any] | None:
        """The cursor of this read if it was sent ahead (once), else None."""
        key = _key(query, params)
        return None if key is None else self._sent.pop(key, None)

    def drop(self) -> None:
        """Serve none of the reads sent: the transaction wrote what they read."""
        self._sent.clear()
