"""The peers' benchmark adapters: one small class per store, all with the same methods.

Used by peers.py. Each adapter drives a store through its own public API, as an agent
author would call it (async APIs on one event loop per adapter): our `TranscriptStore`, the
OpenAI Agents SDK's `SQLiteSession` and `SQLAlchemySession`, LangChain's
`SQLChatMessageHistory` and the Hermes agent's `SessionDB`. (The plain table of mutable rows,
the baseline of issue 13's compaction target, is in plain_rows.py.)

Messages are made as dicts (`{"role", "content"}`); `native()` turns them into what the store
takes (LangChain message objects, say), outside the timed calls. `pragmas()` reads the
durability settings back from the store's own connection.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from transcripts import TranscriptStore

Message = dict[str, Any]
SUMMARY: Message = {"role": "user", "content": "Summary of the conversation so far: …"}
SYNCHRONOUS = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
MATCHED_SQLITE = {"journal_mode": "wal", "synchronous": "FULL"}


def sqlite_pragmas(connection: sqlite3.Connection) -> dict[str, str]:
    """`journal_mode` and `synchronous` of a sqlite3 connection."""
    journal = connection.execute("PRAGMA journal_mode").fetchone()[0]
    level = connection.execute("PRAGMA synchronous").fetchone()[0]
    return {"journal_mode": str(journal).lower(), "synchronous": SYNCHRONOUS.get(level, level)}


def sqlalchemy_url(url: str, driver: str) -> str:
    """A postgresql:// URL for SQLAlchemy with `driver` (asyncpg, psycopg)."""
    return "postgresql+" + driver + "://" + url.split("://", 1)[1]


class Adapter(ABC):
    """A store as an agent uses it: append, read the context, replace it."""

    name: str
    compaction: str  # how the store replaces a history (printed)
    batch_appends = True  # whether its API appends several messages in one transaction
    slow_reads = False  # whether reading thousands of messages takes it most of a second

    def native(self, messages: Sequence[Message]) -> Any:
        """The messages as this store takes them."""
        return list(messages)

    def start(self, session: str) -> None:  # noqa: B027 - most stores need no start
        """Make the session exist (a no-op where the first append does it)."""

    def seed(self, session: str, messages: Sequence[Message]) -> None:
        """Start the session and store `messages` (untimed: the fastest way the API has)."""
        self.start(session)
        native = self.native(messages)
        for first in range(0, len(messages), 1000):
            self.append(session, native[first : first + 1000])

    @abstractmethod
    def append(self, session: str, messages: Any) -> None:
        """Store messages (as `native()` made them): one call of the store's API."""

    @abstractmethod
    def context(self, session: str, latest: int | None) -> list[Any]:
        """The context an agent sends: the `latest` messages where the store reads with a
        limit, else the active messages (kept at that size by `settle`); None: all."""

    @abstractmethod
    def compact(self, session: str, keep: int) -> None:
        """Replace the context by a summary and its last `keep - 1` messages."""

    def settle(self, session: str, size: int) -> None:
        """Keep the context at `size` messages the store's own way (untimed): a compaction
        unless `context` reads with a limit."""
        if len(self.context(session, None)) > size:
            self.compact(session, size)

    @abstractmethod
    def pragmas(self) -> dict[str, str]:
        """The durability settings, read back from the store's own connection."""

    @abstractmethod
    def close(self) -> None:
        """Close connections and engines."""


# -- ours -----------------------------------------------------------------------------------


class OurStore(Adapter):
    """transcript-store: `append`, `active()`, `compact()` (one fenced event)."""

    compaction = "compact(): one CompactionCommitted event"

    def __init__(self, url: str) -> None:
        self.name = "transcript-store"
        self.store = TranscriptStore.open(url, durability="full")
        self.postgres = url.startswith("postgres")

    def start(self, session: str) -> None:
        self.store.start(session, source="benchmark")

    def seed(self, session: str, messages: Sequence[Message]) -> None:
        super().seed(session, messages)
        self.store.active(session)  # the views current, as after any read

    def append(self, session: str, messages: Any) -> None:
        self.store.append(session, messages)

    def context(self, session: str, latest: int | None) -> list[Any]:
        return self.store.active(session)

    def compact(self, session: str, keep: int) -> None:
        result = self.store.compact(session, lambda active: [SUMMARY, *active[-(keep - 1) :]])
        assert result.committed, result.error

    def pragmas(self) -> dict[str, str]:
        """As the store reads them back from its log's connections; the views are derived
        data and commit at NORMAL / synchronous_commit off, by design (README: Storage)."""
        settings = self.store.durability_settings()
        del settings["durability"]
        return {**settings, "views": "off" if self.postgres else "NORMAL"}

    def close(self) -> None:
        self.store.close()


# -- the OpenAI Agents SDK ------------------------------------------------------------------


class AgentsSession(Adapter):
    """An Agents SDK session per session id on one event loop: `add_items`,
    `get_items(limit=…)`, `clear_session`."""

    compaction = "get_items(limit) + clear_session() + add_items(): two transactions"

    def __init__(self) -> None:
        self.loop = asyncio.Runner()
        self.sessions: dict[str, Any] = {}

    @abstractmethod
    def open(self, session: str) -> Any:
        """A new session object for `session`."""

    def session(self, session: str) -> Any:
        """The session object of `session`, made once."""
        if session not in self.sessions:
            self.sessions[session] = self.open(session)
        return self.sessions[session]

    def append(self, session: str, messages: Any) -> None:
        self.loop.run(self.session(session).add_items(messages))

    def context(self, session: str, latest: int | None) -> list[Any]:
        return self.loop.run(self.session(session).get_items(limit=latest))

    def settle(self, session: str, size: int) -> None:
        """Nothing: the SDK reads the context with a limit."""

    def compact(self, session: str, keep: int) -> None:
        async def replace() -> None:
            store = self.session(session)
            kept = await store.get_items(limit=keep - 1)
            await store.clear_session()
            await store.add_items([SUMMARY, *kept])

        self.loop.run(replace())


class AgentsSQLiteSession(AgentsSession):
    """`agents.SQLiteSession` on a file (thread-local sqlite3 connections, WAL)."""

    def __init__(self, path: Path) -> None:
        from agents import SQLiteSession

        super().__init__()
        self.name = "Agents SDK SQLiteSession"
        self.path, self.kind = path, SQLiteSession

    def open(self, session: str) -> Any:
        return self.kind(session, db_path=self.path)

    def pragmas(self) -> dict[str, str]:
        """Of the connection its worker thread uses (its private `_locked_connection`)."""
        store = self.session("pragmas")

        def read() -> dict[str, str]:
            with store._locked_connection() as connection:
                return sqlite_pragmas(connection)

        return self.loop.run(asyncio.to_thread(read))

    def close(self) -> None:
        for store in self.sessions.values():
            store.close()
        self.loop.close()


class AgentsSQLAlchemySession(AgentsSession):
    """`agents.extensions.memory.SQLAlchemySession` on PostgreSQL (asyncpg, as documented)."""

    def __init__(self, url: str) -> None:
        from agents.extensions.memory import SQLAlchemySession
        from sqlalchemy.ext.asyncio import create_async_engine

        super().__init__()
        self.name = "Agents SDK SQLAlchemySession"
        self.kind = SQLAlchemySession
        self.engine = create_async_engine(sqlalchemy_url(url, "asyncpg"))

    def open(self, session: str) -> Any:
        return self.kind(session, engine=self.engine, create_tables=True)

    def pragmas(self) -> dict[str, str]:
        from sqlalchemy import text

        async def read() -> dict[str, str]:
            async with self.engine.connect() as connection:
                row = (await connection.execute(text("SHOW synchronous_commit"))).one()
                return {"synchronous_commit": row[0]}

        return self.loop.run(read())

    def close(self) -> None:
        self.loop.run(self.engine.dispose())
        self.loop.close()


# -- LangChain ------------------------------------------------------------------------------


class LangChainSQL(Adapter):
    """`langchain_community`'s `SQLChatMessageHistory` on a SQLAlchemy engine: `add_messages`,
    `messages` (always every message: it has no limit), `clear`."""

    compaction = "messages + clear() + add_messages(): two transactions"
    slow_reads = True  # messages_from_dict: ~70 µs a message

    def __init__(self, url: str, wal: bool = False) -> None:
        from langchain_community.chat_message_histories import SQLChatMessageHistory
        from langchain_core.messages import messages_from_dict
        from sqlalchemy import create_engine, event

        self.name = "LangChain SQLChatMessageHistory"
        self.kind, self.from_dict = SQLChatMessageHistory, messages_from_dict
        self.engine = create_engine(url)
        if wal:  # the matched durability, on every connection the engine opens

            def matched(connection: Any, _: Any) -> None:
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=FULL")

            event.listen(self.engine, "connect", matched)
        self.histories: dict[str, Any] = {}

    def history(self, session: str) -> Any:
        """The history object of `session`, made once."""
        if session not in self.histories:
            self.histories[session] = self.kind(session, connection=self.engine)
        return self.histories[session]

    def native(self, messages: Sequence[Message]) -> Any:
        kinds = {"user": "human", "assistant": "ai", "system": "system"}
        return self.from_dict(
            [{"type": kinds[m["role"]], "data": {"content": m["content"]}} for m in messages]
        )

    def append(self, session: str, messages: Any) -> None:
        self.history(session).add_messages(messages)

    def context(self, session: str, latest: int | None) -> list[Any]:
        return self.history(session).messages

    def compact(self, session: str, keep: int) -> None:
        history = self.history(session)
        kept = history.messages[-(keep - 1) :]
        history.clear()
        history.add_messages([*self.native([SUMMARY]), *kept])

    def pragmas(self) -> dict[str, str]:
        with self.engine.connect() as connection:
            raw = connection.connection.dbapi_connection
            if isinstance(raw, sqlite3.Connection):
                return sqlite_pragmas(raw)
            cursor = raw.cursor()
            cursor.execute("SHOW synchronous_commit")
            return {"synchronous_commit": cursor.fetchone()[0]}

    def close(self) -> None:
        self.engine.dispose()


# -- the Hermes agent -----------------------------------------------------------------------


class HermesSessionDB(Adapter):
    """`hermes_state.SessionDB` (hermes-agent): `append_message` (one message, one
    transaction), `get_messages_as_conversation`, `archive_and_compact`."""

    compaction = "archive_and_compact(): one transaction (UPDATE active=0, INSERT copies)"
    batch_appends = False

    def __init__(self, path: Path) -> None:
        os.environ.setdefault("HERMES_HOME", str(path.parent / "hermes-home"))
        from hermes_state import SessionDB

        self.name = "Hermes SessionDB"
        self.db = SessionDB(db_path=path)

    def start(self, session: str) -> None:
        self.db.create_session(session, source="benchmark")

    def seed(self, session: str, messages: Sequence[Message]) -> None:
        """Its one-transaction rewrite (`replace_messages`): it has no batch append."""
        self.start(session)
        self.db.replace_messages(session, list(messages))

    def append(self, session: str, messages: Any) -> None:
        for message in messages:
            self.db.append_message(session, message["role"], message["content"])

    def context(self, session: str, latest: int | None) -> list[Any]:
        return self.db.get_messages_as_conversation(session)

    def compact(self, session: str, keep: int) -> None:
        kept = self.db.get_messages_as_conversation(session)[-(keep - 1) :]
        self.db.archive_and_compact(session, [SUMMARY, *kept])

    def pragmas(self) -> dict[str, str]:
        return sqlite_pragmas(self.db._conn)

    def close(self) -> None:
        self.db.close()
