"""The peers benchmark's baseline: what an application would write by hand.

A table of mutable rows, one per message, with an `active` flag and a context order; an append
one transaction (an executemany), a read one indexed SELECT, a compaction one transaction
(UPDATE the superseded rows inactive, INSERT the summary before the kept ones): the "plain
sqlite3 program doing the same job in one transaction" of issue 13's compaction target, with
sqlite3 (WAL, synchronous=FULL) or psycopg.
"""

from __future__ import annotations

import sqlite3
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from peer_stores import SUMMARY, Adapter, Message, sqlite_pragmas


class PlainRows(Adapter):
    """What an application would write by hand: a table of mutable rows, a compaction one
    transaction (UPDATE the superseded rows inactive, INSERT the summary before the kept)."""

    compaction = "one transaction: UPDATE superseded rows, INSERT the summary"
    TABLE = (
        "CREATE TABLE messages (id {serial} PRIMARY KEY, session_id TEXT NOT NULL, "
        "ord INTEGER NOT NULL, active BOOLEAN NOT NULL, body TEXT NOT NULL)"
    )
    INDEXES = (
        "CREATE INDEX messages_context ON messages (session_id, active, ord)",
        "CREATE INDEX messages_order ON messages (session_id, ord)",
    )
    LAST = "SELECT COALESCE(MAX(ord), 0) FROM messages WHERE session_id = ?"
    INSERT = "INSERT INTO messages (session_id, ord, active, body) VALUES (?, ?, TRUE, ?)"
    CONTEXT = "SELECT body FROM messages WHERE session_id = ? AND active = TRUE ORDER BY ord"
    LATEST = (
        "SELECT ord FROM messages WHERE session_id = ? AND active = TRUE ORDER BY ord DESC "
        "LIMIT 1 OFFSET ?"
    )
    SUPERSEDE = (
        "UPDATE messages SET active = FALSE WHERE session_id = ? AND active = TRUE AND ord < ?"
    )

    def native(self, messages: Sequence[Message]) -> Any:
        return [orjson.dumps(m).decode() for m in messages]

    @abstractmethod
    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (`?` placeholders), its rows."""

    @abstractmethod
    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each of `rows`."""

    @abstractmethod
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction."""

    def append(self, session: str, messages: Any) -> None:
        with self.transaction():
            [(last,)] = self.execute(self.LAST, (session,))
            rows = [(session, last + n, body) for n, body in enumerate(messages, 1)]
            self.executemany(self.INSERT, rows)

    def context(self, session: str, latest: int | None) -> list[Any]:
        return [orjson.loads(body) for (body,) in self.execute(self.CONTEXT, (session,))]

    def compact(self, session: str, keep: int) -> None:
        summary = self.native([SUMMARY])[0]
        with self.transaction():
            [(first_kept,)] = self.execute(self.LATEST, (session, keep - 2))
            self.execute(self.SUPERSEDE, (session, first_kept))
            self.execute(self.INSERT, (session, first_kept - 1, summary))


class PlainSQLite(PlainRows):
    """Mutable rows with sqlite3, WAL and synchronous=FULL."""

    def __init__(self, path: Path) -> None:
        self.name = "plain sqlite3 rows"
        self.connection = sqlite3.connect(path, isolation_level=None)
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute("PRAGMA synchronous=FULL")
        for statement in (self.TABLE.format(serial="INTEGER"), *self.INDEXES):
            self.connection.execute(statement)

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.connection.execute(sql, parameters).fetchall()

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.connection.executemany(sql, rows)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise
        self.connection.execute("COMMIT")

    def pragmas(self) -> dict[str, str]:
        return sqlite_pragmas(self.connection)

    def close(self) -> None:
        self.connection.close()


class PlainPostgres(PlainRows):
    """Mutable rows with psycopg (synchronous_commit as the server has it)."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.name = "plain psycopg rows"
        self.connection = psycopg.connect(url.replace("postgres://", "postgresql://"))
        self.connection.autocommit = True
        for statement in (self.TABLE.format(serial="BIGSERIAL"), *self.INDEXES):
            self.execute(statement)

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cursor = self.connection.execute(sql.replace("?", "%s"), parameters, prepare=True)
        return cursor.fetchall() if cursor.description else []

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.connection.cursor().executemany(sql.replace("?", "%s"), rows)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.connection.transaction():
            yield

    def pragmas(self) -> dict[str, str]:
        return {"synchronous_commit": self.execute("SHOW synchronous_commit")[0][0]}

    def close(self) -> None:
        self.connection.close()
