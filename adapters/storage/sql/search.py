"""Full-text search of `message_history`, as a dialect indexes it: the `SearchIndex` interface.

An index is derived from the views: its tables are fed by triggers on a history table, so
it follows the view exactly (catch-up, erasure, and a rebuild, which builds it beside the
rebuilt tables and swaps it in with them) without the projector knowing. An encrypted
store has none (`NoSearch`): an index of its messages would hold their plaintext.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from ....domain.errors import TranscriptError
from ....projections.views import SearchHit
from .dialect import Cursor
from .schema import Tables


class SearchIndex(ABC):
    """The full-text index of a set of view tables, and the queries it answers."""

    @abstractmethod
    def statements(self, tables: Tables) -> list[str]:
        """The statements creating the index of `tables` (its tables and triggers)."""

    @abstractmethod
    def tables(self, tables: Tables) -> list[str]:
        """The index's own tables, swapped in with the view tables on a rebuild."""

    def before_swap(self, c: Cursor) -> None:
        """Make a rebuilt index ready to take the live index's place."""
        return None

    def after_swap(self, c: Cursor) -> None:
        """Finish what the swapped-in index needs under its live names."""
        return None

    def upgrade(self, c: Cursor) -> None:
        """Give a store made before this index existed its index, filled."""
        return None

    def check_available(self) -> None:
        """Raise TranscriptError if this store cannot be searched."""
        return None

    @abstractmethod
    def search(
        self,
        cursor: Cursor,
        query: str,
        *,
        session_id: str | None,
        role: str | None,
        active_only: bool,
        limit: int,
    ) -> list[SearchHit]:
        """Messages ever stored matching a full-text query, best first."""


class NoSearch(SearchIndex):
    """The index of an encrypted store: none."""

    def statements(self, tables: Tables) -> list[str]:
        return []

    def tables(self, tables: Tables) -> list[str]:
        return []

    def check_available(self) -> None:
        raise TranscriptError(
            "full-text search is not available on an encrypted store: "
            "its index would hold the plaintext"
        )

    def search(
        self,
        cursor: Cursor,
        query: str,
        *,
        session_id: str | None,
        role: str | None,
        active_only: bool,
        limit: int,
    ) -> list[SearchHit]:
        self.check_available()
        return []
