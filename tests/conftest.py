"""Shared fixtures. `store` runs a test once per backend: memory and a real SQLite file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from transcripts import TranscriptStore

BACKENDS = ["memory", "sqlite"]


@pytest.fixture(autouse=True)
def private_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the default store location at a temporary directory, never the user's."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.delenv("TRANSCRIPTS_URL", raising=False)
    monkeypatch.delenv("TRANSCRIPTS_LOCK_TIMEOUT", raising=False)
    return home


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def store_url(backend: str, tmp_path: Path) -> str:
    """A URL of a fresh, empty store on the test's backend."""
    if backend == "memory":
        return "memory://"
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def store(store_url: str) -> Iterator[TranscriptStore]:
    with TranscriptStore.open(store_url) as opened:
        yield opened


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A URL of a fresh SQLite file, for tests that need a file (reopening, processes)."""
    return f"sqlite:///{tmp_path / 'store.db'}"


Messages = Callable[..., list[dict]]


@pytest.fixture
def turns() -> Messages:
    """Make `n` alternating user/assistant messages without ids: turns(4, prefix="q")."""

    def make(n: int, prefix: str = "turn") -> list[dict]:
        roles = ("user", "assistant")
        return [{"role": roles[i % 2], "content": f"{prefix} {i}"} for i in range(n)]

    return make
