"""Compactions stored by the release before `CompactionCommitted` version 2, which listed
the ids they superseded: they still load, project, rebuild and migrate as that release
left them (`tests/data/stores/release_compaction_v1.db`, written by it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support.log import fold_of
from support.reads import seen
from support.rows import query, raw_rows
from transcripts import TranscriptStore
from transcripts.adapters.migration import migrate
from transcripts.projections.projector import Projector

OLD_STORE = Path(__file__).parents[1] / "data" / "stores" / "release_compaction_v1.db"
SESSIONS = ("plan", "twice")


@pytest.fixture
def old_url(tmp_path: Path) -> str:
    """A copy of the store the older release wrote (the corpus is never changed)."""
    path = tmp_path / "old.db"
    shutil.copyfile(OLD_STORE, path)
    return f"sqlite:///{path}"


def views_of(url: str) -> dict[str, list[tuple]]:
    """Every view row, but the view versions they were built with, the history rows
    without the position its release did not have (the rows of `active_messages`) and the
    sessions and compaction attempts without the state, context_version and metadata it did
    not have either."""
    rows = raw_rows(url)
    del rows["view_versions"]
    rows["message_history"] = [row[:12] for row in rows["message_history"]]
    rows["sessions"] = [row[:16] for row in rows["sessions"]]
    rows["compaction_attempts"] = [row[:15] for row in rows["compaction_attempts"]]
    return rows


def test_a_store_of_version_1_commits_is_rebuilt_on_open_into_the_views_its_release_wrote(
    old_url: str,
) -> None:
    written = views_of(old_url)
    with TranscriptStore.open(old_url) as store:  # compaction_attempts is a newer version
        assert store.verify_projections().ok
        plan = store.active("plan")
        assert dict(query(old_url, "SELECT * FROM view_versions")) == Projector.VERSIONS
    assert views_of(old_url) == written
    assert [m["id"] for m in plan][1:] == ["q2", "q3", "tail"]
    assert query(old_url, "SELECT type FROM sqlite_master WHERE name = 'active_messages'") == [
        ("view",)  # its release's table, replaced
    ]


def test_a_rebuild_of_version_1_commits_gives_the_views_their_release_wrote(
    old_url: str,
) -> None:
    written = views_of(old_url)
    with TranscriptStore.open(old_url) as store:
        store.rebuild_projections()
        assert store.verify_projections().ok
    assert views_of(old_url) == written


def test_a_store_holding_version_2_commits_has_views_newer_than_the_older_release_reads(
    old_url: str,
) -> None:
    """The older release would quarantine version 2 commits (it cannot read them): the
    views' newer version makes it refuse the store instead, changing nothing (checked by
    hand with that release: "the views of this store were built by a newer release")."""
    with TranscriptStore.open(old_url) as store:
        store.compact("twice", lambda ms: [{"role": "system", "content": "version 2"}])
    older = {**Projector.VERSIONS, "compaction_attempts": 2}
    stored = dict(query(old_url, "SELECT * FROM view_versions"))
    assert [view for view in stored if stored[view] > older[view]] == ["compaction_attempts"]


def test_version_1_commits_load_as_version_2_naming_how_many_active_messages_they_replaced(
    old_url: str,
) -> None:
    with TranscriptStore.open(old_url) as store:
        commits = [e["data"] for e in store.events("plan") if e["type"] == "CompactionCommitted"]
        audit = [c for c in store.compactions("plan") if c["status"] == "committed"]
    # The first was begun on p1…p8, c1, r1 (10); "late" was appended before it committed.
    assert [(c["replaced"], len(c["kept"])) for c in commits] == [(10, 3), (8, 2)]
    assert "superseded" not in commits[0]
    assert [len(entry["superseded"]) for entry in audit] == [7, 6]
    fold = fold_of(old_url, "plan")
    assert [
        entry["superseded"] for entry in fold.compactions if entry["status"] == "committed"
    ] == [entry["superseded"] for entry in audit]


def test_a_session_of_version_1_commits_takes_new_compactions_and_rewinds_and_rebuilds_alike(
    old_url: str,
) -> None:
    with TranscriptStore.open(old_url) as store:
        store.append("plan", [{"id": "new", "role": "user", "content": "after the upgrade"}])
        result = store.compact("plan", lambda ms: [ms[0], {"role": "system", "content": "three"}])
        assert result.committed
        store.rewind("plan", count=1, reason="undo the summary")
        store.compact("twice", lambda ms: [*ms, {"role": "system", "content": "thrice"}])
        before = {session: seen(store, session) for session in SESSIONS}
        live = raw_rows(old_url)
        store.rebuild_projections()
        assert {session: seen(store, session) for session in SESSIONS} == before
        assert store.verify_projections().ok
    assert raw_rows(old_url) == live
    assert [m["id"] for m in before["plan"]["active"]] == [fold_of(old_url, "plan").active_ids[0]]


@pytest.mark.parametrize("target", ["sqlite", "postgres"])
def test_a_migration_of_version_1_commits_gives_the_same_views_on_each_backend(
    old_url: str, target: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    to_url = (
        request.getfixturevalue("postgres_url")
        if target == "postgres"
        else f"sqlite:///{tmp_path / 'copy.db'}"
    )
    migrate(old_url, to_url)
    with TranscriptStore.open(old_url) as old, TranscriptStore.open(to_url) as copy:
        assert copy.verify_projections().ok
        for session in SESSIONS:
            assert seen(copy, session) == seen(old, session)
        assert copy.sessions() == old.sessions()


def test_version_1_and_2_commits_load_as_version_3_without_metadata(old_url: str) -> None:
    with TranscriptStore.open(old_url) as store:
        commits = [e["data"] for e in store.events("plan") if e["type"] == "CompactionCommitted"]
        audit = [c for c in store.compactions("plan") if c["status"] == "committed"]
        store.compact("twice", lambda ms: [{"role": "system", "content": "version 3"}])
        [*_, latest] = store.events("twice")
    assert [commit["metadata"] for commit in commits] == [None, None]
    assert [entry["metadata"] for entry in audit] == [None, None]
    assert (latest["type"], latest["data"]["metadata"]) == ("CompactionCommitted", None)
