"""`transcripts migrate`: a whole store copied between backends, event for event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from support import reads
from support.rows import log_rows
from transcripts import TranscriptStore
from transcripts.adapters.cli import cli
from transcripts.adapters.migration import MigrationError, migrate


@pytest.fixture(params=["sqlite", "postgres"])
def other_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty store on each backend (a migration target)."""
    if request.param == "postgres":
        return request.getfixturevalue("postgres_url")
    return f"sqlite:///{tmp_path / 'target.db'}"


EVENTS = 3 * 9  # what fill() writes: per session Started, 5 appends, 2 compactions, 1 append


def fill(url: str, prefix: str = "s") -> None:
    with TranscriptStore.open(url) as store:
        for k in range(3):
            session = f"{prefix}{k}"
            store.start(session, source="test", model="m", metadata={"k": k})
            store.append(session, [{"role": "user", "content": f"{session} {i}"} for i in range(5)])
            store.compact(session, lambda ms: [{"role": "system", "content": "sum"}, ms[-1]])
            store.compact(session, lambda ms: 1 / 0, reason="fails")
            store.append(session, [{"role": "assistant", "content": "after"}])


@pytest.fixture
def source(tmp_path: Path) -> str:
    """A SQLite store that `fill` wrote: the source of a migration."""
    url = f"sqlite:///{tmp_path / 'source.db'}"
    fill(url)
    return url


def everything(url: str) -> dict[str, Any]:
    """What every public query returns."""
    with TranscriptStore.open(url) as store:
        return reads.everything(store)


def test_a_store_migrated_to_another_backend_and_back_has_the_same_log_and_reads(
    tmp_path: Path, source: str, other_url: str
) -> None:
    back = f"sqlite:///{tmp_path / 'back.db'}"
    there = migrate(source, other_url)
    again = migrate(other_url, back)

    assert there.ok and again.ok
    assert there.events == again.events == len(log_rows(source)) == EVENTS
    assert there.sessions == again.sessions == 3
    assert log_rows(other_url) == log_rows(source) == log_rows(back)
    assert everything(other_url) == everything(source) == everything(back)


def test_a_store_with_rewinds_and_restores_migrates_to_postgresql_and_verifies_clean(
    source: str, postgres_url: str
) -> None:
    with TranscriptStore.open(source) as store:
        popped = store.rewind("s0", count=2, reason="undo")
        store.append("s0", popped[:1])  # restored
        store.rewind("s1", to=store.active("s1")[0]["id"])
        attempt = store.begin_compaction("s2")
        store.rewind("s2", count=1)
        assert store.commit_compaction(attempt, []).failure == "conflict"
    migration = migrate(source, postgres_url)
    assert migration.ok and migration.events == EVENTS + 5
    assert log_rows(postgres_url) == log_rows(source)
    assert everything(postgres_url) == everything(source)
    with TranscriptStore.open(postgres_url) as store:
        assert store.verify_projections().ok
        assert [entry["rewound"] for entry in store.history("s0")].count(True) == 1
        assert store.explain("s0", popped[1]["id"])["rewound"]["reason"] == "undo"


def test_migration_reports_its_progress_up_to_the_source_head(source: str, other_url: str) -> None:
    seen: list[tuple[int, int]] = []
    migrate(source, other_url, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (EVENTS, EVENTS)


def test_migrating_into_a_store_that_has_events_is_refused_and_copies_nothing(
    source: str, other_url: str
) -> None:
    fill(other_url, prefix="mine")
    before = log_rows(other_url)
    with pytest.raises(MigrationError, match="not empty"):
        migrate(source, other_url)
    assert log_rows(other_url) == before


def test_append_adds_the_sessions_to_a_store_that_has_others(source: str, other_url: str) -> None:
    fill(other_url, prefix="mine")
    before = log_rows(other_url)
    migration = migrate(source, other_url, append=True)
    assert migration.ok and migration.events == EVENTS
    assert log_rows(other_url) == before + log_rows(source)
    with TranscriptStore.open(other_url) as store:
        assert sorted(s["id"] for s in store.sessions()) == [
            "mine0", "mine1", "mine2", "s0", "s1", "s2"
        ]  # fmt: skip


def test_append_refuses_a_session_both_stores_have_and_copies_nothing(
    source: str, other_url: str
) -> None:
    with TranscriptStore.open(other_url) as store:
        store.start("s1")
    before = log_rows(other_url)
    with pytest.raises(MigrationError, match="1 sessions are in both stores .*s1"):
        migrate(source, other_url, append=True)
    assert log_rows(other_url) == before


def test_a_source_that_is_not_a_store_is_refused(tmp_path: Path, other_url: str) -> None:
    with pytest.raises(MigrationError, match="no store at"):
        migrate(f"sqlite:///{tmp_path / 'missing.db'}", other_url)
    assert not (tmp_path / "missing.db").exists()


def test_a_store_cannot_be_migrated_into_itself(source: str) -> None:
    with pytest.raises(MigrationError, match="same store"):
        migrate(source, source)


def test_the_migrate_command_copies_verifies_and_says_so(source: str, other_url: str) -> None:
    result = CliRunner().invoke(cli, ["migrate", "--from", source, "--to", other_url])
    assert result.exit_code == 0, result.output
    assert f"Copied {EVENTS} events of 3 sessions" in result.stdout
    assert "Rebuilt and verified the views of 3 sessions." in result.stdout

    refused = CliRunner().invoke(cli, ["migrate", "--from", source, "--to", other_url])
    assert refused.exit_code == 1
    assert "not empty" in refused.output and "--append" in refused.output
