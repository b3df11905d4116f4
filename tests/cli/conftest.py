"""Fixtures for the command line tests: a store file with known content, a runner (`run_cli`
of support/cli.py on it), `normalise` (support/cli.py), which makes the made-up ids and
times of an output comparable, and `output`, a successful command's stdout made so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from support.cli import Run, normalise, run_cli
from support.messages import TRIP, TRIP_SUMMARY
from transcripts import TranscriptStore


@pytest.fixture
def db(tmp_path: Path) -> str:
    """The URL of an empty store file."""
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def run(db: str) -> Run:
    """Run the command line on the `db` store: run("show", "trip"). Tables are 120 wide."""

    def invoke(*args: str, url: str | None = None, input: str | None = None) -> Result:
        return run_cli(url or db, *args, input=input)

    return invoke


@pytest.fixture
def populated(db: str) -> str:
    """Session `trip` (6 messages, a failed and a committed compaction) and session `chat`
    (a child of trip, 2 messages); returns the store URL."""
    with TranscriptStore.open(db) as store:
        store.start("trip", source="test", model="model-a")
        store.append("trip", TRIP)
        attempt = store.begin_compaction("trip")
        store.fail_compaction(attempt, "summarizer timed out", reason="over budget")
        attempt = store.begin_compaction("trip")
        system, *_, last = attempt.messages
        result = store.commit_compaction(
            attempt,
            [system, TRIP_SUMMARY, last],
            reason="over budget",
            tokens_before=400,
            tokens_after=100,
        )
        assert result.committed
        store.start("chat", source="other", model="model-b", parent_id="trip")
        store.append(
            "chat",
            [
                {"id": "c1", "role": "user", "content": "Hello"},
                {"id": "c2", "role": "assistant", "content": "Hi! How can I help?"},
            ],
        )
    return db


@pytest.fixture(name="normalise")
def normalise_fixture() -> Callable[[str], str]:
    return normalise


@pytest.fixture
def output() -> Callable[[Result], str]:
    """A successful command's stdout, normalised, without trailing spaces."""

    def read(result: Result) -> str:
        assert result.exit_code == 0, result.output
        assert result.stderr == ""
        return "\n".join(line.rstrip() for line in normalise(result.stdout).splitlines()) + "\n"

    return read
