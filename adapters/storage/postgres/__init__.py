"""The PostgreSQL backend (see `backend`): registered for `postgresql://` and `postgres://`
URLs; needs the `postgres` extra (psycopg)."""

from .backend import PostgresBackend

BACKEND = PostgresBackend()
