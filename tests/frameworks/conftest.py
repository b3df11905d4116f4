"""The framework integrations' tests run each framework's real loop with its own fake
model, on the backends several processes can share: a SQLite file and PostgreSQL (when
$TRANSCRIPTS_TEST_POSTGRES_URL names a server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.backends import DURABLE_BACKENDS, fresh_url
from transcripts import TranscriptStore


@pytest.fixture(params=DURABLE_BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty store on a SQLite file, then on PostgreSQL."""
    return fresh_url(request.param, tmp_path, request)


@pytest.fixture
def store(store_url: str) -> Iterator[TranscriptStore]:
    with TranscriptStore.open(store_url) as opened:
        yield opened
