"""The library's SQLite persistence module, with a statement cache on every connection.

`eventsourcing.sqlite` opens connections with `cached_statements=True`, a cache of one
statement, so every write re-parses its SQL. This module is the same persistence module
(`PERSISTENCE_MODULE=transcripts.adapters.storage.sqlite.factory:Factory`) whose
connections keep their prepared statements. The store files are already in WAL mode (see
`backend`), so connections do not switch journal modes either. The log's writes commit at
`SQLITE_SYNCHRONOUS` (FULL, or NORMAL for the store's durability "normal").

Every connection deletes with `secure_delete` on: the bytes of a deleted row are zeroed,
so what `forget` deletes does not linger in free space (Debian builds SQLite with it on
already; other builds do not).
"""

from __future__ import annotations

from eventsourcing.sqlite import SQLiteFactory
from eventsourcing.utils import Environment, EnvType

from ..internals import CachingSQLiteConnectionPool
from .search import register_functions

SYNCHRONOUS = "SQLITE_SYNCHRONOUS"  # FULL (the store's durability "full") or NORMAL


class Factory(SQLiteFactory):
    def __init__(self, env: Environment | EnvType | None) -> None:
        super().__init__(env)
        plain = self.datastore.pool  # no connection is open yet: swap it for a caching pool
        self.datastore.pool = CachingSQLiteConnectionPool(
            db_name=plain.db_name,
            lock_timeout=plain.lock_timeout,
            pool_size=plain.pool_size,
            max_overflow=plain.max_overflow,
            pool_timeout=plain.pool_timeout,
            max_age=plain.max_age,
            pre_ping=plain.pre_ping,
            synchronous=self.env.get(SYNCHRONOUS, "FULL"),
            prepare=register_functions,  # the search index's content is made with one
        )
        plain.close()
