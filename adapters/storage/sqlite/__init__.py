"""The SQLite backend (see `backend`): registered for `sqlite://` and `memory://` URLs."""

from .backend import SQLiteBackend

BACKEND = SQLiteBackend()
