"""Rebuilding the views: a projection bug is fixed by shipping a projector with bumped view
versions, which rebuilds the views on open; a rebuild replays the whole log into fresh tables
and swaps them in at once, so readers and writers never see a half-built view."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

from support.log import expected_summary, fold_of, write_behind_the_views
from support.reads import everything
from support.rows import connect, head, raw_rows, row_counts, tracked
from transcripts import TranscriptStore
from transcripts.projections.projector import Projector


class DropsAssistantMessages(Projector):
    """Bug: never writes assistant messages to message_history."""

    VERSIONS: ClassVar[dict[str, int]] = {
        **Projector.VERSIONS,
        "message_history": Projector.VERSIONS["message_history"] + 1,
    }

    def _add_history(self, row: Any, message: dict, event: Any, added_by: str | None) -> None:
        if message["role"] != "assistant":
            super()._add_history(row, message, event, added_by)


class CorruptsTheRole(Projector):
    """Bug: stores assistant messages of the history as user messages (column and JSON)."""

    VERSIONS: ClassVar[dict[str, int]] = {
        **Projector.VERSIONS,
        "message_history": Projector.VERSIONS["message_history"] + 1,
    }

    def _add_history(self, row: Any, message: dict, event: Any, added_by: str | None) -> None:
        if message["role"] == "assistant":
            message = {**message, "role": "user"}
        super()._add_history(row, message, event, added_by)


class CorruptsTheRoleColumn(Projector):
    """Bug: the role column says "user" for assistant messages (the JSON is right), in
    message_history and so in active_messages. Users filter on this column with plain SQL."""

    VERSIONS: ClassVar[dict[str, int]] = {
        **Projector.VERSIONS,
        "active_messages": Projector.VERSIONS["active_messages"] + 1,
    }

    def _add_history(self, row: Any, message: dict, event: Any, added_by: str | None) -> None:
        super()._add_history(row, message, event, added_by)
        history = self.changes.history_inserts[(row.session_id, message["id"])]
        if history.role == "assistant":
            history.role = "user"


class FixedProjector(Projector):
    """The fix: the right logic, with every view version bumped past the buggy ones."""

    VERSIONS: ClassVar[dict[str, int]] = {view: v + 2 for view, v in Projector.VERSIONS.items()}


SUMMARY = "the summary of alpha's compaction"

# The bug, the view it breaks, the kind of problem verify must report, and the rows it names:
# the assistant messages (a2 is superseded, so it is no longer in active_messages). Without
# a4's history row, the compaction keeping it cannot be made: its summary is missing too.
BUGS = {
    "dropped messages": (
        DropsAssistantMessages,
        "message_history",
        "missing",
        {"a2", "a4", "b2", "b3", SUMMARY},
    ),
    "a wrong role in the message": (
        CorruptsTheRole,
        "message_history",
        "changed",
        {"a2", "a4", "b2", "b3"},
    ),
    "a wrong role column": (
        CorruptsTheRoleColumn,
        "active_messages",
        "changed",
        {"a4", "b2", "b3"},
    ),
}


def stored_versions(url: str) -> dict[str, int]:
    with connect(url) as db:
        return dict(db.execute("SELECT view, version FROM view_versions").fetchall())


def assert_views_match_the_log(store: TranscriptStore, url: str) -> None:
    for summary in store.sessions():
        fold = fold_of(url, summary["id"])
        assert summary == expected_summary(fold)
        assert store.active(summary["id"]) == fold.active()
        assert store.history(summary["id"]) == fold.history()
        assert store.compactions(summary["id"]) == fold.compactions


@pytest.mark.parametrize("bug", BUGS.values(), ids=BUGS.keys())
def test_a_projection_bug_is_reported_by_verify_and_repaired_by_the_fixed_versions_rebuild_on_open(
    sqlite_url: str, fill, bug: tuple[type[Projector], str, str, set[str]]
) -> None:
    buggy, view, kind, wrong_rows = bug
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
        right = raw_rows(sqlite_url)
        summary_id = store.compactions("alpha")[0]["added"][0]

    with TranscriptStore.open(sqlite_url, projector=buggy) as store:  # rebuilt on open, wrongly
        assert stored_versions(sqlite_url) == buggy.VERSIONS
        assert raw_rows(sqlite_url)[view] != right[view]
        store.append(
            "beta", [{"id": "b3", "role": "assistant", "content": "written by the buggy code"}]
        )
        report = store.verify_projections()
        assert not report.ok
        wrong = {(p.session_id, p.view, p.kind) for p in report.problems}
        assert ("alpha", view, kind) in wrong
        assert ("beta", view, kind) in wrong
        keys = {p.key for p in report.problems if p.view == view and p.kind == kind}
        assert keys == {summary_id if key == SUMMARY else key for key in wrong_rows}
        assert all(
            str(p).startswith(f"session {p.session_id!r}: {p.view}: {p.kind}")
            for p in report.problems
        )

    with TranscriptStore.open(sqlite_url, projector=FixedProjector) as store:  # rebuilt on open
        assert stored_versions(sqlite_url) == FixedProjector.VERSIONS
        assert store.verify_projections().ok
        assert_views_match_the_log(store, sqlite_url)
        assert store.history("beta")[-1]["message"] == {
            "id": "b3",
            "role": "assistant",
            "content": "written by the buggy code",
        }
        with connect(sqlite_url) as db:
            assert db.execute(
                "SELECT DISTINCT role FROM active_messages WHERE message_id = 'b3'"
            ).fetchall() == [("assistant",)]
            assert db.execute(
                "SELECT role FROM message_history WHERE message_id = 'b3'"
            ).fetchall() == [("assistant",)]


def test_opening_with_the_same_view_versions_does_not_rebuild_and_other_versions_do(
    sqlite_url: str, fill
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
    with connect(sqlite_url) as db:  # a change only a rebuild would undo
        db.execute("DELETE FROM message_history WHERE message_id = 'a1'")
    TranscriptStore.open(sqlite_url).close()
    with connect(sqlite_url) as db:
        assert db.execute(
            "SELECT COUNT(*) FROM message_history WHERE message_id = 'a1'"
        ).fetchone() == (0,)
    with TranscriptStore.open(sqlite_url, projector=FixedProjector) as store:
        assert stored_versions(sqlite_url) == FixedProjector.VERSIONS
        assert [status.version for status in store.projection_status()] == [
            *FixedProjector.VERSIONS.values(),
            FixedProjector.VERSIONS["message_history"],  # the search index, of its rows
        ]
        assert store.history("alpha")[0]["id"] == "a1"
        assert store.verify_projections().ok


def test_a_new_store_opened_with_a_projector_records_its_view_versions(sqlite_url: str) -> None:
    with TranscriptStore.open(sqlite_url, projector=FixedProjector) as store:
        store.start("s")
        assert store.verify_projections().ok
    assert stored_versions(sqlite_url) == FixedProjector.VERSIONS


def test_rebuilding_correct_views_changes_no_row_and_returns_the_number_of_events(
    store_url: str, fill
) -> None:
    with TranscriptStore.open(store_url) as store:
        fill(store)
        before = everything(store)
        events = sum(len(store.events(session["id"])) for session in store.sessions())
        if store_url.startswith("sqlite"):
            rows = raw_rows(store_url)
            assert store.rebuild_projections() == events
            assert raw_rows(store_url) == rows
        else:
            assert store.rebuild_projections() == events
        assert everything(store) == before
        assert store.verify_projections().ok
        assert store.rebuild_projections() == events  # and again: it always replays everything


def test_a_rebuild_reports_its_progress_batch_by_batch_up_to_the_whole_log(sqlite_url: str) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        write_behind_the_views(sqlite_url, sessions=1, messages=2499)  # 2,500 events
        store.catch_up_projections()
        calls: list[tuple[int, int]] = []
        assert store.rebuild_projections(lambda done, total: calls.append((done, total))) == 2500
    assert calls == [(1000, 2500), (2000, 2500), (2500, 2500)]


def test_readers_see_the_complete_old_views_until_the_rebuilt_ones_are_swapped_in(
    sqlite_url: str,
) -> None:
    with TranscriptStore.open(sqlite_url) as store, TranscriptStore.open(sqlite_url) as reader:
        write_behind_the_views(sqlite_url, sessions=2, messages=1500, compact_every=500)
        store.catch_up_projections()
        before_rows, before_reads = raw_rows(sqlite_url), everything(reader)
        seen: list[int] = []

        def progress(done: int, total: int) -> None:
            assert raw_rows(sqlite_url) == before_rows
            assert everything(reader) == before_reads
            with connect(sqlite_url) as db:
                building = db.execute("SELECT COUNT(*) FROM message_history__next").fetchone()[0]
            assert 0 < building
            seen.append(done)

        store.rebuild_projections(progress)
        assert len(seen) >= 3  # it was watched mid-way
        assert raw_rows(sqlite_url) == before_rows
        with connect(sqlite_url) as db:
            assert not db.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE '%__next'"
            ).fetchall()


def test_writes_made_while_a_rebuild_runs_are_in_the_rebuilt_views(sqlite_url: str) -> None:
    with TranscriptStore.open(sqlite_url) as store, TranscriptStore.open(sqlite_url) as writer:
        write_behind_the_views(sqlite_url, sessions=1, messages=3000)
        store.catch_up_projections()
        writer.start("during")
        written: list[dict] = []

        def progress(done: int, total: int) -> None:  # between two batches of the rebuild
            if len(written) < 3:  # (a writer in every batch would keep the rebuild going)
                written.extend(writer.append("during", [{"role": "user", "content": f"at {done}"}]))
            if len(written) == 1:
                attempt = writer.begin_compaction("during")
                writer.commit_compaction(attempt, [{"role": "system", "content": "s"}])

        store.rebuild_projections(progress)
        assert len(written) == 3
        assert tracked(sqlite_url) == head(sqlite_url)
        assert store.verify_projections().ok
        assert [m["id"] for m in store.active("during")][1:] == [m["id"] for m in written[1:]]
        assert everything(store) == everything(writer)


def test_an_index_a_user_created_on_a_view_table_survives_a_rebuild(sqlite_url: str, fill) -> None:
    # The views are plain tables "so users can index and query them" (issue 3).
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
        with connect(sqlite_url) as db:
            db.execute("CREATE INDEX history_by_role ON message_history (role)")
        store.rebuild_projections()
    with connect(sqlite_url) as db:
        indexes = {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        }
    assert "history_by_role" in indexes
    assert row_counts(sqlite_url)["message_history"] == 9


def test_two_rebuilds_at_once_while_a_writer_writes_both_end_and_leave_views_that_verify(
    sqlite_url: str,
) -> None:
    first, second = TranscriptStore.open(sqlite_url), TranscriptStore.open(sqlite_url)
    writer = TranscriptStore.open(sqlite_url)
    try:
        write_behind_the_views(sqlite_url, sessions=3, messages=2000, compact_every=700)
        first.catch_up_projections()
        writer.start("during")
        errors: list[BaseException] = []
        barrier = threading.Barrier(3)

        def run(work: Callable[[], object]) -> None:
            barrier.wait()
            try:
                work()
            except BaseException as error:  # reported below, with the others
                errors.append(error)

        def write() -> None:
            for i in range(20):
                writer.append("during", [{"role": "user", "content": f"during {i}"}])
                if i % 5 == 0:
                    writer.active("during")

        threads = [
            threading.Thread(target=run, args=(work,))
            for work in (first.rebuild_projections, second.rebuild_projections, write)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert len(first.active("during")) == 20
        assert first.verify_projections().ok
        assert tracked(sqlite_url) == head(sqlite_url)
        with connect(sqlite_url) as db:
            assert not db.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE '%next'"
            ).fetchall()
    finally:
        for store in (first, second, writer):
            store.close()
