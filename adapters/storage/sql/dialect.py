"""What a SQL database gives the dialect-neutral views: transactions, types, catalog, tracking.

The views' SQL is written once, with `?` placeholders and every column it reads named; a
`Dialect` runs it: it opens read and write transactions (a write transaction holds the
views' write lock from its start, so two never project at once), converts values to and
from the database's types, answers questions about its catalog, and keeps the views'
tracked marks (each database in its own table: `tracked_mark`, `track`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import Any

from .schema import ColumnTypes

Cursor = Any  # a DB-API cursor that takes `?` placeholders and whose rows are read by name
# A tracked place in the log's order: the order key of the last entry (an integer; None where
# the order is the log position alone), and that entry's log position.
Mark = tuple[int | None, int]


class Dialect(ABC):
    """One SQL database's way of running the views' SQL."""

    columns: ColumnTypes
    position: str  # the log position column of the events table
    ciphertext_as_text: bool  # whether content columns take ciphertext as text (base64)

    # The entries after a tracked mark (its name: `tracked_params`), and whether the views
    # reflect every entry of the log (one statement: one moment): set by each database.
    after_tracked: str
    reflects_log: str

    def __init__(self, events_table: str) -> None:
        self.events_table = events_table  # the library's table of stored events
        self.log_order = self.position  # the log's order
        self.log_order_back = f"{self.position} DESC"  # the same, from the end
        self.readable = "1 = 1"  # of the entries after a mark, those a catch-up may project now
        self.mark_key = "NULL"  # the order key `Mark` holds, selected with each entry

    def own_turn(self, c: Cursor) -> Callable[[], bool]:
        """Whether the write transaction of `c` may project its own entries, with every
        entry before them, in its next statements (asked before they are sent, answered
        after): here always, one writer at a time."""
        return lambda: True

    def tracked_params(self, name: str) -> tuple[Any, ...]:
        """The parameters of `after_tracked` and `reflects_log` for the mark `name`."""
        return (name,)

    @abstractmethod
    def reading(self, *, snapshot: bool = True) -> AbstractContextManager[Cursor]:
        """A cursor to read with: in a read-only transaction that sees one consistent state
        of the database, or (`snapshot=False`, cheaper) each statement on its own."""

    @abstractmethod
    def writing(self, *, rebuilding: bool = False) -> AbstractContextManager[Cursor]:
        """A view transaction, holding the views' write lock from its start, committed at
        the end. `rebuilding`: one of a rebuild's bulk transactions (which may be tuned)."""

    def indexing(self) -> AbstractContextManager[Cursor]:
        """A transaction of the search index's catch-up, holding the index's lock
        (`lock_index`) from its start, committed at the end: here, a view transaction."""
        return self.writing()

    def lock_index(self, c: Cursor) -> None:
        """Take the search index's lock for the rest of the transaction, where a view
        transaction does not hold it already (it does here: one writer at a time)."""
        return None

    @abstractmethod
    def log_cursor(self, transaction: object) -> Cursor | None:
        """A cursor to project the views with inside a write transaction of the log (the
        backend's `LogTransaction`), or None if they cannot be projected in it now."""

    def read_ahead(  # noqa: B027 - nothing to do where a read costs no round trip
        self, transaction: object, reads: Sequence[tuple[str, Sequence[Any]]]
    ) -> None:
        """Send the reads a write transaction of the log will make of the views (with the
        views' write lock, tried first) ahead of being asked (see
        `LogTransaction.read_ahead`); nothing where a read costs no round trip."""

    @abstractmethod
    def cursor_in(self, transaction: object) -> Cursor:
        """A cursor to read the views with inside a write transaction of the log, whoever
        holds the views' write lock."""

    def pipelined(self, c: Cursor) -> AbstractContextManager[object]:
        """A block whose statements may be sent together, their results not waited for one
        by one (a round trip each where the database is across a network)."""
        return nullcontext()

    def defers_errors(self, c: Cursor) -> bool:
        """Whether a statement's error on `c` fails its whole transaction where it commits,
        not where the statement is run: nothing to roll back to a savepoint for."""
        return False

    @abstractmethod
    def create_tables(self, statements: Sequence[str]) -> None:
        """Create the tables the marks are tracked in, if missing, and run the views' CREATE
        statements."""

    @abstractmethod
    def relation_kind(self, c: Cursor, name: str) -> str | None:
        """ "table" or "view": what `name` is in the store's schema (None: nothing)."""

    def drop(self, c: Cursor, name: str) -> None:
        """Drop the table or SQL view `name`, if there is one."""
        kind = self.relation_kind(c, name)
        if kind is not None:
            c.execute(f"DROP {kind.upper()} {name}")

    @abstractmethod
    def user_indexes(self, c: Cursor, tables: Sequence[str]) -> list[str]:
        """The statements creating the indexes users made on `tables` (not the schema's)."""

    def swap_table(self, c: Cursor, live: str, rebuilt: str) -> None:
        """Put a rebuilt table in the place of the live one."""
        c.execute(f"DROP TABLE IF EXISTS {live}")
        c.execute(f"ALTER TABLE {rebuilt} RENAME TO {live}")

    @abstractmethod
    def tuples(self, c: Cursor, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """The rows of `statement` as tuples, for the hot reads: reading 50 rows by name costs
        sqlite3 a quarter of the statement."""

    def read_tuples(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """`tuples` of one statement read on its own (as `reading(snapshot=False)`)."""
        with self.reading(snapshot=False) as c:
            return self.tuples(c, statement, params)

    @abstractmethod
    def load_json(self, value: Any) -> Any: ...

    @abstractmethod
    def load_time(self, value: Any) -> datetime: ...

    @abstractmethod
    def time_param(self, value: datetime) -> Any: ...

    @abstractmethod
    def bool_param(self, value: bool) -> Any: ...

    def tracked(self, c: Cursor, name: str) -> int:
        """The log position of the last entry the views tracked under `name` reflect (0:
        none)."""
        return self.tracked_mark(c, name)[1]

    @abstractmethod
    def tracked_mark(self, c: Cursor, name: str) -> Mark:
        """The mark tracked under `name` ((None, 0): none)."""

    @abstractmethod
    def track(self, c: Cursor, name: str, mark: Mark) -> None:
        """Record, in the transaction of the rows it reflects, that `name` is at `mark`
        (the library's IntegrityError if it is there already: exactly once). PostgreSQL's
        write transactions do not wait for the answer: the error comes with the next
        result read, or the COMMIT."""

    @abstractmethod
    def forget(self, c: Cursor, names: Sequence[str]) -> None:
        """Remove the marks tracked under `names`."""
