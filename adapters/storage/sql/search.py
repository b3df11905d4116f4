"""Full-text search of `message_history`, as a dialect indexes it: the `SearchIndex` interface.

An index is derived from `message_history`, and may lag it: a search first indexes the rows
added since the index's tracked log position (`search_catch_up`), by their `log_position`
(the text of each message is `projections.search_text`'s, the same on every backend). The
views delete an erased session's entries with its rows; a rebuild swaps in an empty index
with the rebuilt tables, which the next search fills. An encrypted store has none
(`NoSearch`): an index of its messages would hold their plaintext.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from ....domain.errors import TranscriptError
from ....projections.views import SearchHit, SearchQuery
from .dialect import Cursor
from .schema import Tables

SEARCH_TRACKING_NAME = "transcripts~search"  # the log position the index reflects


class SearchIndex(ABC):
    """The full-text index of a set of view tables, and the queries it answers."""

    @abstractmethod
    def statements(self, tables: Tables) -> list[str]:
        """The statements creating the index of `tables`."""

    @abstractmethod
    def tables(self, tables: Tables) -> list[str]:
        """The index's own tables, swapped in with the view tables on a rebuild."""

    @abstractmethod
    def index(self, c: Cursor, tables: Tables, first: int, last: int) -> int:
        """Index the history rows of `tables` added by the log positions `first` to `last`
        (included); return how many."""

    @abstractmethod
    def erase(self, c: Cursor, tables: Tables, session_id: str, indexed: int) -> None:
        """Drop the entries of a session whose history rows are being deleted (the index
        holds those up to the log position `indexed`)."""

    def entries(self, c: Cursor, table: str) -> int:
        """How many messages the index table `table` holds."""
        c.execute(f"SELECT COUNT(*) AS n FROM {table}")
        return int(c.fetchone()["n"])

    def before_swap(self, c: Cursor) -> None:
        """Drop what would stop the rebuilt tables from taking the live names."""
        return None

    def after_swap(self, c: Cursor) -> None:
        """Finish what the swapped-in index needs under its live names."""
        return None

    def upgrade(self, c: Cursor) -> None:
        """Remove what an older release indexed with (before the views are rebuilt)."""
        return None

    def check_available(self) -> None:
        """Raise TranscriptError if this store cannot be searched."""
        return None

    @abstractmethod
    def search(self, cursor: Cursor, query: SearchQuery) -> list[SearchHit]:
        """Messages ever stored matching a full-text query, best first."""


class NoSearch(SearchIndex):
    """The index of an encrypted store: none."""

    def statements(self, tables: Tables) -> list[str]:
        return []

    def tables(self, tables: Tables) -> list[str]:
        return []

    def index(self, c: Cursor, tables: Tables, first: int, last: int) -> int:
        return 0

    def erase(self, c: Cursor, tables: Tables, session_id: str, indexed: int) -> None:
        return None

    def check_available(self) -> None:
        raise TranscriptError(
            "full-text search is not available on an encrypted store: "
            "its index would hold the plaintext"
        )

    def search(self, cursor: Cursor, query: SearchQuery) -> list[SearchHit]:
        self.check_available()
        return []


def filters(query: SearchQuery, active: str) -> tuple[list[str], list[object]]:
    """The WHERE conditions (`?` placeholders, history aliased `h`) and parameters of a
    query's filters; `active` is the dialect's condition for an active row."""
    conditions: list[str] = []
    parameters: list[object] = []
    for column, value in (("h.session_id", query.session_id), ("h.role", query.role)):
        if value is not None:
            conditions.append(f"{column} = ?")
            parameters.append(value)
    if query.active_only:
        conditions.append(active)
    return conditions, parameters
