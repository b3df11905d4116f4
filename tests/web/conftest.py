"""The web app in-process (Starlette's test client, over HTTP semantics without a socket)
on a store of the test's backend."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from transcripts import TranscriptStore
from transcripts.adapters.web.app import create_app


@pytest.fixture
def client(store: TranscriptStore) -> Iterator[TestClient]:
    with TestClient(create_app(store), base_url="http://127.0.0.1") as client:
        yield client
