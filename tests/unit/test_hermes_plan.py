"""The Hermes import planner alone: the `messages` rows of one session (HermesRow values, as the
reader decodes them) become the appends, compactions, failed attempts and rewinds they evidence.

Rows are written the way Hermes writes them (support/hermes.py): an in-place compaction
archives the live rows, hides the originals of its tail and re-inserts head, summary and tail
as new rows; the failed-commit bug (hermes-agent#99477) re-inserts them on top of the live
rows; a rewind hides the last live rows."""

from __future__ import annotations

from support.hermes import MERGED, SUMMARY, HermesHistory, replayed
from transcripts.adapters.importers.hermes.plan import (
    Append,
    Compact,
    Fail,
    Rewind,
    SessionPlan,
    message_id,
    plan_session,
    row_ranges,
)

CALL = '[{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]'


def planned(rows: list[int]) -> list[str]:
    return [message_id("s1", row) for row in rows]


def plan(hermes: HermesHistory, **fields: object) -> SessionPlan:
    return plan_session(hermes.session(**fields))


def appended(result: SessionPlan) -> list[str]:
    return [unit.message["id"] for unit in result.units if isinstance(unit, Append)]


def kinds(result: SessionPlan) -> list[str]:
    return [type(unit).__name__ for unit in result.units]


# -- a plain session --------------------------------------------------------------------------


def test_a_plain_session_is_one_append_per_row_in_row_order_with_stable_ids() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(3, "turn")
    hermes.say("assistant", "", tool_calls=CALL)
    hermes.say("tool", "done", tool_call_id="c1", tool_name="t")
    result = plan(hermes)
    assert kinds(result) == ["Append"] * 5
    assert appended(result) == planned([*rows, 4, 5])
    assert result.units[0] == Append(
        {"id": "hermes-s1-1", "role": "user", "content": "turn 0", "timestamp": 1_800_000_000}
    )
    call = result.units[3]
    assert isinstance(call, Append)
    assert call.message["tool_calls"][0]["id"] == "c1"  # the JSON column, decoded
    assert (result.messages, result.active, result.committed, result.failed) == (5, 5, 0, 0)
    assert (result.duplicates_dropped, result.repaired, result.notes) == (0, False, [])


def test_a_planned_id_names_the_session_and_the_row() -> None:
    assert message_id("20260829_101500_a1b2c3", 17) == "hermes-20260829_101500_a1b2c3-17"


# -- a committed compaction -------------------------------------------------------------------


def test_a_committed_compaction_keeps_the_carried_head_and_tail_and_supersedes_the_middle() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")  # rows 1-6
    summary_row = hermes.compact(
        head=2, tail=2, text="early"
    )  # copies 7-8, summary 9, copies 10-11
    more = hermes.turns(2, "more")  # rows 12-13
    result = plan(hermes)
    assert kinds(result) == ["Append"] * 6 + ["Compact"] + ["Append"] * 2
    compaction = result.units[6]
    assert isinstance(compaction, Compact)
    assert compaction.reason == f"Hermes in-place compaction (summary row {summary_row})"
    assert compaction.snapshot == planned(rows)
    assert compaction.superseded == planned(rows[2:4])
    assert compaction.summary_id == message_id("s1", summary_row) + ":summary"
    assert compaction.replacement == [
        *planned(rows[:2]),
        {"role": "user", "content": SUMMARY.format("early"), "timestamp": 1_800_000_006.000002},
        *planned(rows[4:]),
    ]
    assert compaction.commits is True
    assert appended(result) == planned([*rows, *more])  # no copy imported
    assert (result.messages, result.active, result.committed, result.failed) == (9, 7, 1, 0)
    assert (result.duplicates_dropped, result.repaired) == (0, False)
    assert result.notes == [
        "4 rows carried past a compaction are the same messages as their originals: rows 7–8, 10–11"
    ]


def test_a_second_compaction_summarises_the_first_summary_with_the_messages_after_it() -> None:
    hermes = HermesHistory()
    first = hermes.turns(6, "early")
    first_summary = hermes.compact(head=2, tail=2, text="early turns")
    later = hermes.turns(4, "later")
    hermes.compact(head=2, tail=1, text="the summary and later turns")
    one, two = [unit for unit in plan(hermes).units if isinstance(unit, Compact)]
    assert two.snapshot == [
        *planned(first[:2]),
        one.summary_id,
        *planned(first[4:]),
        *planned(later),
    ]
    assert two.superseded == [
        message_id("s1", first_summary) + ":summary",
        *planned(first[4:]),
        *planned(later[:3]),
    ]
    assert two.commits


def test_token_counts_of_every_message_give_the_tokens_before_and_after() -> None:
    hermes = HermesHistory()
    for n in (10, 20, 30):
        hermes.say("user", f"{n} tokens", token_count=n)
    hermes.compact(head=1, tail=0, text="short")
    [compaction] = [unit for unit in plan(hermes).units if isinstance(unit, Compact)]
    assert (compaction.tokens_before, compaction.tokens_after) == (60, None)  # summary uncounted


# -- the failed-commit bug --------------------------------------------------------------------


def test_copies_reinserted_while_their_originals_are_live_are_a_failed_attempt_not_messages() -> (
    None
):
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")
    summary_row = hermes.compact(head=2, tail=2, text="attempt", commit=False)
    more = hermes.turns(2, "more")
    result = plan(hermes, last_compression_error="database is locked")
    assert kinds(result) == ["Append"] * 6 + ["Fail"] + ["Append"] * 2
    failed = result.units[6]
    assert isinstance(failed, Fail)
    assert failed.reason == f"Hermes in-place compaction (summary row {summary_row})"
    assert failed.snapshot == planned(rows)
    assert "the failed-commit bug, hermes-agent#99477" in failed.error
    assert "head rows 7–8 (copies of 1–2), summary row 9, tail rows 10–11 (copies of 5–6)" in (
        failed.error
    )
    assert "would have superseded 2 of the 6 active messages (rows 3–4)" in failed.error
    assert failed.error.endswith("The session's last recorded compaction error: database is locked")
    assert appended(result) == planned([*rows, *more])  # the copies and the summary dropped
    assert (result.messages, result.active, result.committed, result.failed) == (8, 8, 0, 1)
    assert (result.duplicates_dropped, result.repaired) == (4, True)
    assert result.notes == [
        "1 failed in-place compaction commits (hermes-agent#99477) recorded as failed "
        "attempts; their 4 re-inserted copies and 1 uncommitted summaries (rows 9) were not "
        "imported"
    ]


def test_a_failed_commit_a_later_compaction_archived_is_told_failed_by_its_flush_stamps() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")
    failed_row = hermes.compact(head=2, tail=2, text="attempt one", commit=False)
    hermes.turns(2, "more")
    hermes.compact(head=2, tail=2, text="attempt two")
    result = plan(hermes)
    assert kinds(result) == ["Append"] * 6 + ["Fail"] + ["Append"] * 2 + ["Compact"]
    assert appended(result) == planned([*rows, 12, 13])  # the copies are never messages
    assert (result.committed, result.failed, result.duplicates_dropped) == (1, 1, 4)
    assert result.stamped == {"failed": [failed_row]}
    assert not result.doubts


def test_a_commit_a_later_compaction_archived_is_told_committed_by_its_burst_stamps() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")
    committed_row = hermes.compact(head=2, tail=2, text="attempt one")
    more = hermes.turns(2, "more")
    hermes.compact(head=2, tail=2, text="attempt two")
    result = plan(hermes)
    assert kinds(result) == ["Append"] * 6 + ["Compact"] + ["Append"] * 2 + ["Compact"]
    assert appended(result) == planned([*rows, *more])
    assert (result.committed, result.failed) == (2, 0)
    assert result.stamped == {"committed": [committed_row]}


def test_a_burst_whose_rows_carry_only_stored_stamps_cannot_be_told_and_is_in_doubt() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")
    summary_row = hermes.compact(head=2, tail=2, text="attempt one")
    for row in hermes.rows[summary_row - 3 : summary_row + 2]:  # a resumed session's copies
        if row["id"] != summary_row:
            row["timestamp"] = hermes.rows[hermes.copied[row["id"]] - 1]["timestamp"]
    hermes.turns(2, "more")
    hermes.compact(head=2, tail=2, text="attempt two")
    result = plan(hermes)
    assert (result.committed, result.failed) == (2, 0)
    assert result.doubts == [
        f"the compaction with summary row {summary_row} had its rows archived by a later "
        "compaction and they carry no write times of their own, so the file cannot tell "
        "whether it committed; imported as committed (the context Hermes went on with)"
    ]
    assert appended(result)[:6] == planned(rows)


def test_a_user_saying_the_same_thing_twice_says_it_twice() -> None:
    hermes = HermesHistory()
    hermes.say("user", "ok")
    hermes.say("assistant", "Done.")
    hermes.say("user", "ok")
    hermes.say("tool", "same output", tool_call_id="c1", tool_name="t")
    hermes.say("tool", "same output", tool_call_id="c1", tool_name="t")
    result = plan(hermes)
    assert appended(result) == planned([1, 2, 3, 4, 5])
    assert (result.duplicates_dropped, result.repaired) == (0, False)


def test_a_summary_merged_into_the_first_tail_message_keeps_that_message_once() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")
    hermes.compact(head=0, tail=2, text="merged")
    merged = hermes.rows[-2]
    merged["content"] = MERGED.format(merged["content"], SUMMARY.format("merged"))
    merged.pop("_compressed_summary", None)
    hermes.rows.pop(-3)  # the standalone summary: merged into the first tail copy instead
    result = plan(hermes)
    [compaction] = [unit for unit in result.units if isinstance(unit, Compact)]
    assert compaction.superseded == planned(rows[:4])
    summary = compaction.replacement[0]
    assert isinstance(summary, dict) and summary["content"] == SUMMARY.format("merged")
    assert compaction.replacement[1:] == planned(rows[4:])
    assert appended(result) == planned(rows)


def test_repeated_failed_commits_are_one_failed_attempt_each() -> None:
    hermes = HermesHistory()
    hermes.turns(4, "turn")
    for attempt in range(3):
        hermes.compact(head=1, tail=1, text=f"attempt {attempt}", commit=False)
    result = plan(hermes)
    assert kinds(result) == ["Append"] * 4 + ["Fail"] * 3
    assert {unit.snapshot == planned(range(1, 5)) for unit in result.units[4:]} == {True}
    assert (result.failed, result.duplicates_dropped, result.active) == (3, 6, 4)


# -- summaries without copies, rewinds, refusals ----------------------------------------------


def test_a_rotation_child_s_handoff_summary_is_an_ordinary_message() -> None:
    hermes = HermesHistory()  # the parent's first rows, its handoff summary, the conversation
    hermes.turns(2, "before")
    handoff = hermes.say("user", SUMMARY.format("the parent session"), _compressed_summary=1)
    hermes.turns(2, "after")
    parent_head = [row.identity for row in hermes.session().rows[:2]]
    result = plan(hermes, parent_id="parent", parent_head=parent_head)
    assert kinds(result) == ["Append"] * 5
    assert message_id("s1", handoff) in appended(result)
    assert result.committed == result.failed == 0
    assert result.doubts == []


def test_a_summary_with_no_copies_after_the_conversation_began_is_a_failed_commit() -> None:
    hermes = HermesHistory()  # hermes-agent 0.18.0: the flush writes only the summary
    rows = hermes.turns(4, "before")
    summary = hermes.say("user", SUMMARY.format("never committed"), _compressed_summary=1)
    after = hermes.turns(2, "after")
    for fields in ({}, {"parent_id": "parent", "parent_head": ["other"]}):
        result = plan(hermes, **fields)
        assert kinds(result) == ["Append"] * 4 + ["Fail"] + ["Append"] * 2
        assert appended(result) == planned([*rows, *after])
        failed = result.units[4]
        assert isinstance(failed, Fail) and failed.replacement is None
        assert failed.snapshot == planned(rows)
        assert (result.failed, result.lone_summaries, result.repaired) == (1, [summary], True)
        assert not result.doubts


def test_a_rewind_imports_the_undone_rows_then_rewinds_them_as_the_tail_of_the_context() -> None:
    hermes = HermesHistory()
    kept = hermes.turns(4, "kept")
    undone = hermes.rewind(2)
    after = hermes.turns(2, "after")
    result = plan(hermes)
    assert kinds(result) == ["Append"] * 4 + ["Rewind"] + ["Append"] * 2
    assert result.units[4] == Rewind("Hermes rewind (rows 3–4 undone)", planned(undone))
    assert appended(result) == planned([*kept, *after])
    assert (result.messages, result.active) == (6, 4)
    assert (result.committed, result.failed, result.rewinds) == (0, 0, 1)
    assert result.notes == [
        "rows 3–4 were undone in Hermes: their messages are rewound, kept in the history"
    ]
    assert replayed(result) == planned([*kept[:2], *after])


def test_undos_with_a_live_row_between_them_are_one_rewind_each() -> None:
    hermes = HermesHistory()
    hermes.turns(4, "kept")
    first = hermes.rewind(2)
    hermes.turns(2, "again")
    second = hermes.rewind(1)
    last = hermes.say("user", "last")
    result = plan(hermes)
    rewinds = [unit for unit in result.units if isinstance(unit, Rewind)]
    assert [unit.message_ids for unit in rewinds] == [planned(first), planned(second)]
    assert kinds(result)[-3:] == ["Append", "Rewind", "Append"]
    assert result.rewinds == 2
    assert replayed(result) == planned([1, 2, 5, last])


def test_a_rewind_at_the_end_of_the_file_is_the_last_step() -> None:
    hermes = HermesHistory()
    hermes.turns(3, "turn")
    undone = hermes.rewind(1)
    result = plan(hermes)
    assert result.units[-1] == Rewind("Hermes rewind (rows 3 undone)", planned(undone))
    assert (result.messages, result.active, result.rewinds) == (3, 2, 1)


def test_rows_undone_before_a_compaction_are_rewound_before_it_and_not_in_its_snapshot() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")
    undone = hermes.rewind(2)
    hermes.compact(head=1, tail=1, text="after the undo")
    result = plan(hermes)
    assert kinds(result) == ["Append"] * 6 + ["Rewind", "Compact"]
    rewind, compaction = result.units[6:]
    assert isinstance(rewind, Rewind) and rewind.message_ids == planned(undone)
    assert isinstance(compaction, Compact) and compaction.snapshot == planned(rows[:4])
    assert (result.committed, result.rewinds) == (1, 1)


def test_an_undo_that_would_leave_a_tool_result_without_its_call_is_kept_and_in_doubt() -> None:
    hermes = HermesHistory()
    hermes.say("user", "run it")
    hermes.say("tool", "done", tool_call_id="c1", tool_name="t")  # its call comes after it
    hermes.say("assistant", "", tool_calls=CALL)
    hermes.rewind(1)
    result = plan(hermes)
    assert kinds(result) == ["Append"] * 3
    assert (result.active, result.rewinds) == (3, 0)
    assert len(result.doubts) == 1
    assert result.doubts[0].startswith(
        "rows 3 were undone in Hermes, but the store cannot take their messages out of the context"
    )


def test_a_compaction_the_store_would_refuse_is_planned_as_one_that_fails() -> None:
    hermes = HermesHistory()
    hermes.say("user", "run it")
    hermes.say("assistant", "", tool_calls=CALL)
    hermes.say("tool", "done", tool_call_id="c1", tool_name="t")
    hermes.compact(head=1, tail=1, text="the tool result loses its call")
    result = plan(hermes)
    [compaction] = [unit for unit in result.units if isinstance(unit, Compact)]
    assert compaction.commits is False
    assert compaction.superseded == planned([2])
    assert (result.committed, result.failed, result.active, result.messages) == (0, 1, 3, 3)
    assert any("orphaned_tool_result" in note for note in result.notes)


def test_a_row_the_store_cannot_take_is_left_out_with_a_note() -> None:
    hermes = HermesHistory()
    hermes.say("user", "fine")
    bad = hermes.say("robot", "beep")
    hermes.say("assistant", "also fine")
    result = plan(hermes, problems=["session column x holds binary data; not imported"])
    assert appended(result) == planned([1, 3])
    assert result.notes[0] == "session column x holds binary data; not imported"
    assert result.notes[1].startswith(f"row {bad} not imported: message role must be one of")


def test_row_ranges_joins_consecutive_rows() -> None:
    assert row_ranges([7, 1, 2, 3, 3, 9, 10]) == "1–3, 7, 9–10"
    assert row_ranges([]) == ""


def test_a_later_copy_of_a_summary_that_never_committed_is_not_a_message() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")
    failed = hermes.compact(head=2, tail=2, text="attempt", commit=False)
    hermes.copy([failed])  # carried again, as a later head or tail would carry it
    more = hermes.turns(2, "more")
    result = plan(hermes)
    assert appended(result) == planned([*rows, *more])
    assert result.stray_copies == [failed + 3]
    assert result.repaired


def test_a_later_copy_of_a_summary_read_as_a_failed_commit_with_no_copies_is_in_doubt() -> None:
    hermes = HermesHistory()
    hermes.turns(2, "turn")
    lone = hermes.compact(head=0, tail=0, text="alone")  # committed, but it looks like 0.18.0's
    hermes.turns(2, "more")
    hermes.compact(head=1, tail=1, text="later")  # its head: a copy of the lone summary
    result = plan(hermes)
    assert (result.lone_summaries, result.stray_copies) == ([lone], [lone + 3])
    assert result.doubts == [
        f"rows {lone + 3} are copies a later compaction carried of summary rows {lone}, read as "
        "failed commits that left only their summary: they may have committed (keeping "
        "neither head nor tail), and the context after them differ from Hermes'"
    ]


def test_a_message_repeating_the_first_one_right_before_a_commit_stays_a_message() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")
    again = hermes.say("user", "turn 0")  # the user says the first thing again
    hermes.compact(head=0, tail=2, text="later")  # archives it; no head copy
    result = plan(hermes)
    [compaction] = [unit for unit in result.units if isinstance(unit, Compact)]
    assert appended(result) == planned([*rows, again])
    assert compaction.superseded == planned([*rows[:5]])
    assert compaction.replacement[1:] == planned([rows[5], again])
