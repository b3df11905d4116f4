"""compare_session alone: the rows of one session's views (built here from the row
dataclasses) against the fold of its events, every difference named by view, kind and row."""

from __future__ import annotations

import dataclasses

import pytest

from support.events import collect, commit, start
from support.fold_rows import rows_of
from support.messages import TRIP, summary
from transcripts.projections.fold import SessionFold
from transcripts.projections.verify import Problem, compare_session
from transcripts.projections.views import SessionRows


@pytest.fixture
def fold() -> SessionFold:
    """The trip, a committed compaction keeping m1 and m6, and a failed one."""
    transcript = start("trip", source="cli")
    transcript.append(TRIP)
    commit(transcript, [TRIP[0], summary(), TRIP[5]], compaction_id="cmp-1")
    transcript.fail_compaction(
        compaction_id="cmp-2", based_on_version=8, failure="conflict", error="late", reason="",
        would_supersede=["m1"],
    )  # fmt: skip
    return SessionFold.of(collect(transcript))


def found(problems: list[Problem]) -> list[tuple[str | None, str, str, str]]:
    return [(p.session_id, p.view, p.kind, p.key) for p in problems]


def renumbered(rows: list, key: str) -> list:
    return [dataclasses.replace(row, **{key: n}) for n, row in enumerate(rows, 1)]


def test_rows_that_match_the_fold_have_no_problem(fold: SessionFold) -> None:
    assert compare_session("trip", fold, rows_of(fold)) == []


def test_a_missing_active_row_is_missing_and_leaves_a_gap_in_the_positions(
    fold: SessionFold,
) -> None:
    rows = rows_of(fold)
    del rows.active[2]  # m6
    assert found(compare_session("trip", fold, rows)) == [
        ("trip", "active_messages", "missing", "m6"),
    ]
    rows = rows_of(fold)
    del rows.active[0]
    assert found(compare_session("trip", fold, rows)) == [
        ("trip", "active_messages", "missing", "m1"),
        ("trip", "active_messages", "misordered", "positions"),
    ]


def test_an_extra_history_row_is_extra(fold: SessionFold) -> None:
    rows = rows_of(fold)
    forged = dataclasses.replace(rows.history[0], seq=len(rows.history) + 1, message_id="forged")
    rows.history.append(forged)
    assert found(compare_session("trip", fold, rows)) == [
        ("trip", "message_history", "extra", "forged")
    ]


def test_a_second_row_for_one_message_is_extra(fold: SessionFold) -> None:
    rows = rows_of(fold)
    rows.active.append(dataclasses.replace(rows.active[-1], position=4))
    assert found(compare_session("trip", fold, rows)) == [
        ("trip", "active_messages", "extra", "m6")
    ]
    assert "a second row for it" in compare_session("trip", fold, rows)[0].detail


def test_a_changed_row_names_each_field_that_differs(fold: SessionFold) -> None:
    rows = rows_of(fold)
    rows.history[1] = dataclasses.replace(rows.history[1], active=True, superseded_by=None)
    [problem] = compare_session("trip", fold, rows)
    assert (problem.view, problem.kind, problem.key) == ("message_history", "changed", "m2")
    assert problem.detail == (
        "active: expected False, stored True; superseded_by: expected 'cmp-1', stored None"
    )


@pytest.mark.parametrize(
    ("view", "index", "change", "key"),
    [
        ("active", 0, {"role": "user"}, "m1"),
        ("active", 2, {"message": {"id": "m6", "role": "user", "content": "forged"}}, "m6"),
        ("history", 4, {"appended_version": 42}, "m5"),
        ("history", 5, {"added_by": "cmp-x"}, "m6"),
        ("attempts", 0, {"status": "failed"}, "cmp-1"),
        ("attempts", 1, {"superseded_count": 0}, "cmp-2"),
    ],
    ids=[
        "an active role",
        "an active message",
        "an appended version",
        "an added-by mark",
        "a compaction's status",
        "a failed attempt's count",
    ],
)
def test_every_stored_column_is_compared(
    fold: SessionFold, view: str, index: int, change: dict, key: str
) -> None:
    rows = rows_of(fold)
    stored = getattr(rows, view)
    stored[index] = dataclasses.replace(stored[index], **change)
    names = {"active": "active_messages", "history": "message_history"}
    assert found(compare_session("trip", fold, rows)) == [
        ("trip", names.get(view, "compaction_attempts"), "changed", key)
    ]


def test_rows_in_another_order_are_misordered(fold: SessionFold) -> None:
    rows = rows_of(fold)
    rows.active[:] = renumbered([rows.active[1], rows.active[0], rows.active[2]], "position")
    rows.attempts.reverse()
    problems = compare_session("trip", fold, rows)
    assert found(problems) == [
        ("trip", "active_messages", "misordered", "rows"),
        ("trip", "compaction_attempts", "misordered", "rows"),
    ]
    summary_id = fold.active_ids[1]
    assert (
        problems[0].detail
        == f"expected ['m1', '{summary_id}', 'm6'], stored ['{summary_id}', 'm1', 'm6']"
    )
    assert "expected ['cmp-1', 'cmp-2'], stored ['cmp-2', 'cmp-1']" in problems[-1].detail


def test_seqs_that_are_not_one_to_n_are_misordered_positions(fold: SessionFold) -> None:
    rows = rows_of(fold)
    rows.history[-1] = dataclasses.replace(rows.history[-1], seq=70)
    [problem] = compare_session("trip", fold, rows)
    assert (problem.view, problem.kind, problem.key) == (
        "message_history",
        "misordered",
        "positions",
    )
    assert problem.detail.endswith("[1, 2, 3, 4, 5, 6, 70]")


def test_a_missing_or_changed_sessions_row_is_reported(fold: SessionFold) -> None:
    rows = rows_of(fold)
    assert found(compare_session("trip", fold, dataclasses.replace(rows, session=None))) == [
        ("trip", "sessions", "missing", "trip")
    ]
    assert rows.session is not None
    rows.session.message_count, rows.session.compactions_failed = 40, 0
    [problem] = compare_session("trip", fold, rows)
    assert (problem.view, problem.kind) == ("sessions", "changed")
    assert problem.detail == (
        "message_count: expected 7, stored 40; compactions_failed: expected 1, stored 0"
    )


def test_rows_of_a_session_the_log_does_not_have_are_extra_in_each_view(fold: SessionFold) -> None:
    rows = rows_of(fold)
    problems = compare_session("ghost", None, dataclasses.replace(rows, attempts=[]))
    assert found(problems) == [
        ("ghost", "sessions", "extra", "ghost"),
        ("ghost", "active_messages", "extra", "ghost"),
        ("ghost", "message_history", "extra", "ghost"),
    ]
    assert problems[1].detail == "3 row(s) of a session the log does not have"
    assert compare_session("ghost", None, SessionRows(None, [], [], [])) == []


def test_a_problem_reads_as_a_sentence_naming_session_view_kind_and_row() -> None:
    assert str(Problem("beta", "active_messages", "missing", "b2")) == (
        "session 'beta': active_messages: missing b2"
    )
    assert str(Problem(None, "quarantined_events", "quarantined", "position 3", "bad")) == (
        "no session: quarantined_events: quarantined position 3 (bad)"
    )


@pytest.fixture
def rewound_fold() -> SessionFold:
    """The trip with m5 and m6 rewound (version 8), then m6 restored (version 9)."""
    transcript = start("trip", source="cli")
    transcript.append(TRIP)
    transcript.rewind(["m5", "m6"], reason="undo")
    transcript.append([TRIP[5]])
    return SessionFold.of(collect(transcript))


def test_rows_of_rewound_and_restored_messages_that_match_the_fold_have_no_problem(
    rewound_fold: SessionFold,
) -> None:
    rows = rows_of(rewound_fold)
    assert [(h.message_id, h.rewound_version, h.restored_version) for h in rows.history[4:]] == [
        ("m5", 8, None),
        ("m6", None, 9),
    ]
    assert compare_session("trip", rewound_fold, rows) == []


@pytest.mark.parametrize(
    ("index", "change", "detail"),
    [
        (4, {"rewound_version": None}, "rewound_version: expected 8, stored None"),
        (5, {"restored_version": None}, "restored_version: expected 9, stored None"),
        (0, {"rewound_version": 8}, "rewound_version: expected None, stored 8"),
    ],
    ids=["a rewound mark lost", "a restored mark lost", "a rewound mark forged"],
)
def test_the_rewind_marks_of_the_history_are_compared(
    rewound_fold: SessionFold, index: int, change: dict, detail: str
) -> None:
    rows = rows_of(rewound_fold)
    rows.history[index] = dataclasses.replace(rows.history[index], **change)
    [problem] = compare_session("trip", rewound_fold, rows)
    assert (problem.view, problem.kind, problem.detail) == ("message_history", "changed", detail)


def test_a_wrong_count_of_rewound_messages_in_the_sessions_row_is_reported(
    rewound_fold: SessionFold,
) -> None:
    rows = rows_of(rewound_fold)
    assert rows.session is not None and rows.session.rewound_count == 1
    rows.session.rewound_count = 0
    [problem] = compare_session("trip", rewound_fold, rows)
    assert (problem.view, problem.detail) == ("sessions", "rewound_count: expected 1, stored 0")
