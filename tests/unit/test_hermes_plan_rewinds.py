"""The Hermes import planner on histories mixing turns, tool calls, /undo and in-place
compactions (committed or failing), written the way Hermes writes them: every rewind it plans
takes out the tail of the context at that point, and a message an undo took out of the live
rows is out of the context the plan leaves, or the plan says why not: it could not tell, or
the store refused a compaction that would have superseded it."""

from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from support.hermes import HermesHistory, replayed
from transcripts.adapters.importers.hermes.plan import Rewind, message_id, plan_session
from transcripts.adapters.importers.hermes.steps import Compact

Operation = tuple[str, int, int, bool]


def planned(rows: list[int]) -> list[str]:
    return [message_id("s1", row) for row in rows]


operations = st.lists(
    st.one_of(
        st.tuples(st.just("turns"), st.integers(1, 4), st.just(0), st.just(False)),
        st.tuples(st.just("tool"), st.just(0), st.just(0), st.just(False)),
        st.tuples(st.just("undo"), st.integers(1, 3), st.just(0), st.just(False)),
        st.tuples(st.just("compact"), st.integers(0, 2), st.integers(0, 2), st.booleans()),
    ),
    max_size=12,
)


def write(history: list[Operation], hide_tails: bool = False) -> HermesHistory:
    """The rows Hermes writes for `history`; each turn and tool call says something new.
    `hide_tails`: commits hide the originals of their tail, as the synthetic schema-31 file
    shows (rows an undo did not hide, so only the first test uses it)."""
    hermes = HermesHistory()
    for number, (kind, a, b, commit) in enumerate(history):
        live = len(hermes.live())
        if kind == "turns":
            hermes.turns(a, f"turn {number}")
        elif kind == "tool":
            call = [{"id": f"c{number}", "type": "function", "function": {"name": "t"}}]
            hermes.say("assistant", "", tool_calls=json.dumps(call))
            hermes.say("tool", f"output {number}", tool_call_id=f"c{number}", tool_name="t")
        elif kind == "undo" and live >= a:
            hermes.rewind(a)
        elif kind == "compact" and live > a + b:
            summary = f"summary {number}"
            hermes.compact(head=a, tail=b, text=summary, commit=commit, hide_tail=hide_tails)
    return hermes


@settings(max_examples=300, deadline=None)
@given(operations, st.booleans())
def test_every_planned_rewind_takes_out_the_tail_of_the_context_at_that_point(
    history: list[Operation], hide_tails: bool
) -> None:
    plan = plan_session(write(history, hide_tails).session())
    replayed(plan)  # asserts each rewind takes the tail
    assert plan.rewinds == sum(isinstance(unit, Rewind) for unit in plan.units)


@settings(max_examples=300, deadline=None)
@given(operations)
# An undo hid only a failed commit's copy (row 4): its original (row 2) stayed live until the
# commit of row 7 archived it, which the store refuses (it would orphan row 6's output).
@example(
    [
        ("tool", 0, 0, False),
        ("compact", 0, 1, False),
        ("undo", 1, 0, False),
        ("tool", 0, 0, False),
        ("compact", 0, 1, True),
    ]
)
# A commit (rows 8-12) whose summary and tail an undo hid, its head copies left live.
@example(
    [
        ("turns", 4, 0, False),
        ("undo", 1, 0, False),
        ("compact", 0, 2, False),
        ("compact", 2, 2, True),
        ("undo", 3, 0, False),
    ]
)
# A commit keeping neither head nor tail (row 3) reads as a failed commit that left only its
# summary; a later commit carries a copy of it (row 7): in doubt.
@example(
    [
        ("tool", 0, 0, False),
        ("compact", 0, 0, True),
        ("turns", 1, 0, False),
        ("tool", 0, 0, False),
        ("compact", 2, 1, True),
        ("undo", 3, 0, False),
    ]
)
# The commit of row 5 supersedes row 1, but the store refuses it (it would orphan row 6's
# output); the tail copy an undo then hid (row 7) copies a failed commit's head copy of row 1.
@example(
    [
        ("tool", 0, 0, False),
        ("compact", 1, 0, False),
        ("undo", 1, 0, False),
        ("compact", 0, 2, True),
        ("undo", 2, 0, False),
    ]
)
# An undo hid a failed commit's summary and tail (rows 6-8) but left its head copy (row 5) live:
# Hermes' live rows end with a second row 1, which later compactions carry: in doubt.
@example(
    [
        ("turns", 4, 0, False),
        ("compact", 1, 2, False),
        ("undo", 3, 0, False),
        ("compact", 0, 1, False),
        ("compact", 0, 1, True),
        ("undo", 2, 0, False),
    ]
)
def test_a_message_an_undo_took_out_of_the_live_rows_is_out_of_the_context_or_the_plan_says_why(
    history: list[Operation],
) -> None:
    hermes = write(history)
    plan = plan_session(hermes.session())
    active = set(replayed(plan))
    # A compaction the store refuses keeps all it would supersede (a note says so).
    refused = [unit for unit in plan.units if isinstance(unit, Compact) and not unit.commits]
    kept = {m for unit in refused for m in unit.superseded}
    for first in hermes.undone:
        planned_id = message_id("s1", first)
        assert planned_id not in active or plan.doubts or planned_id in kept  # kept, and said


def test_an_undo_after_a_compaction_rewinds_what_its_hidden_tail_copies_carry_and_after() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")
    hermes.compact(head=2, tail=2, text="early")  # copies 7-8, summary 9, copies 10-11
    reply = hermes.say("assistant", "reply")
    assert hermes.rewind(2) == [11, reply]  # the last tail copy and the reply
    after = hermes.turns(2, "after")
    plan = plan_session(hermes.session())
    rewinds = [unit for unit in plan.units if isinstance(unit, Rewind)]
    assert rewinds == [Rewind(f"Hermes rewind (rows 11–{reply} undone)", planned([rows[5], reply]))]
    assert replayed(plan)[-3:] == planned([rows[4], *after])
    assert plan.doubts == []


def test_an_undo_hiding_a_failed_commit_s_copy_leaves_its_live_original_in_the_context() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")
    hermes.compact(head=2, tail=2, text="attempt", commit=False)
    assert hermes.rewind(1) == [11]  # a copy of row 6, re-inserted by the failed commit
    more = hermes.turns(2, "more")
    plan = plan_session(hermes.session())
    kinds = [type(unit).__name__ for unit in plan.units][6:]
    assert kinds == ["Fail", "Append", "Append"]  # row 6 is live: Hermes loads it on resume
    assert replayed(plan) == planned([*rows, *more])
    assert "rows 11 are copies an undo hid while the rows they copy stay live" in "".join(
        plan.notes
    )


def test_a_failed_commit_s_copy_an_undo_hid_leaves_its_message_to_the_next_commit() -> None:
    hermes = write([("tool", 0, 0, False), ("compact", 0, 1, False), ("undo", 1, 0, False)])
    assert hermes.undone == set()  # the undo hid copy 4; row 2 stays live: Hermes keeps it
    hermes.turns(2, "turn")  # rows 5-6
    hermes.compact(head=0, tail=1, text="later")  # archives rows 1-3, 5-6: summary 7, copy 8
    plan = plan_session(hermes.session())
    assert plan.rewinds == 0
    assert replayed(plan) == ["hermes-s1-7:summary", "hermes-s1-6"]  # row 2's, superseded


def test_a_failed_commit_s_undone_copy_s_message_stays_if_the_store_refuses_the_next() -> None:
    tool = ("tool", 0, 0, False)
    hermes = write([tool, ("compact", 0, 1, False), ("undo", 1, 0, False), tool])
    hermes.compact(head=0, tail=1, text="later")  # its tail: row 6's output, without its call
    plan = plan_session(hermes.session())
    refused = plan.units[-1]
    assert isinstance(refused, Compact) and not refused.commits
    assert refused.superseded == planned([1, 2, 5])  # what Hermes compacted, row 2's among them
    assert replayed(plan) == planned([1, 2, 5, 6])  # kept, as the store keeps a refused one's
    assert (plan.rewinds, plan.doubts) == (0, [])


def test_an_undo_reaching_back_past_a_commit_s_summary_leaves_its_live_head_copies_a_head() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(4, "turn")
    summary = hermes.compact(head=2, tail=1, text="early")  # copies 5-6, summary 7, copy 8
    hermes.rewind(2)  # the summary and the tail copy: the head copies stay live
    plan = plan_session(hermes.session())
    compact = next(unit for unit in plan.units if isinstance(unit, Compact))
    assert compact.commits and compact.summary_id == f"hermes-s1-{summary}:summary"
    assert compact.superseded == planned([rows[2]])  # the head is rows 1-2, copied, not new
    assert replayed(plan) == planned(rows[:2])  # what the live head copies hold
    assert plan.doubts == []


def test_an_undo_hiding_a_failed_commit_s_summary_but_not_its_head_copies_is_in_doubt() -> None:
    hermes = HermesHistory()
    rows = hermes.turns(4, "turn")
    summary = hermes.compact(head=1, tail=2, text="attempt", commit=False)  # copy 5, summary 6
    hermes.rewind(3)  # the summary and its tail copies; head copy 5 stays live
    plan = plan_session(hermes.session())
    assert replayed(plan) == planned(rows)  # row 1's message once, though two live rows hold it
    assert plan.doubts == [
        f"an undo hid the summary (row {summary}) of a failed commit but left its head copies "
        f"(rows {summary - 1}) live: Hermes' live rows end with them, repeating messages the "
        "context holds once; kept once"
    ]


def test_an_undo_of_every_row_after_a_failed_commit_leaves_an_empty_context() -> None:
    hermes = HermesHistory()
    hermes.turns(3, "turn")
    hermes.compact(head=1, tail=0, text="attempt", commit=False)  # copy 4, summary 5
    hermes.rewind(2)
    hermes.rewind(3)  # every row hidden
    plan = plan_session(hermes.session())
    assert replayed(plan) == []
