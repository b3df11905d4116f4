"""The backends the tests run on: memory, a SQLite file and, when
$TRANSCRIPTS_TEST_POSTGRES_URL names a server, PostgreSQL; and a fresh store on one of them
(tests/conftest.py: the `store_url` and `durable_url` fixtures)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

POSTGRES_VARIABLE = "TRANSCRIPTS_TEST_POSTGRES_URL"
POSTGRES_SERVER = os.environ.get(POSTGRES_VARIABLE)  # read once: tests change the environment
BACKENDS = ["memory", "sqlite", *(["postgres"] if POSTGRES_SERVER else [])]
# The backends whose stores other connections and processes can reach.
DURABLE_BACKENDS = [backend for backend in BACKENDS if backend != "memory"]


def fresh_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A URL of a fresh, empty store on `backend`: in memory, a file in `tmp_path`, or a new
    PostgreSQL database (the `postgres_url` fixture: dropped after the test)."""
    if backend == "memory":
        return "memory://"
    if backend == "postgres":
        return request.getfixturevalue("postgres_url")
    return f"sqlite:///{tmp_path / 'store.db'}"
