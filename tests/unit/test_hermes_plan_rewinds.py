"""The Hermes import planner on histories mixing turns, tool calls, /undo and in-place
compactions (committed or failing), written the way Hermes writes them: every rewind it plans
takes out the tail of the context at that point."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from transcripts.adapters.importers.hermes.plan import Rewind, plan_session

from support.hermes import HermesHistory, replayed

Operation = tuple[str, int, int, bool]

operations = st.lists(
    st.one_of(
        st.tuples(st.just("turns"), st.integers(1, 4), st.just(0), st.just(False)),
        st.tuples(st.just("tool"), st.just(0), st.just(0), st.just(False)),
        st.tuples(st.just("undo"), st.integers(1, 3), st.just(0), st.just(False)),
        st.tuples(st.just("compact"), st.integers(0, 2), st.integers(0, 2), st.booleans()),
    ),
    max_size=12,
)


def write(history: list[Operation]) -> HermesHistory:
    """The rows Hermes writes for `history`; each turn and tool call says something new."""
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
            hermes.compact(head=a, tail=b, text=f"summary {number}", commit=commit)
    return hermes


@settings(max_examples=300, deadline=None)
@given(operations)
def test_every_planned_rewind_takes_out_the_tail_of_the_context_at_that_point(
    history: list[Operation],
) -> None:
    plan = plan_session(write(history).session())
    replayed(plan)  # asserts each rewind takes the tail
    assert plan.rewinds == sum(isinstance(unit, Rewind) for unit in plan.units)


def test_an_undo_of_every_row_after_a_failed_commit_leaves_an_empty_context() -> None:
    hermes = HermesHistory()
    hermes.turns(3, "turn")
    hermes.compact(head=1, tail=0, text="attempt", commit=False)  # copy 4, summary 5
    hermes.rewind(2)
    hermes.rewind(3)  # every row hidden
    plan = plan_session(hermes.session())
    assert replayed(plan) == []
