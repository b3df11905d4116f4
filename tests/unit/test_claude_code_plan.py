"""`plan_records`, the projection of Claude Code records shared by the importer and the SDK
store: a boundary waits for its summary unless the records are final; a record that does
not continue the one before it is noted; a copy is counted once."""

from __future__ import annotations

from typing import Any

from transcripts.adapters.importers.claude_code import plan_records
from transcripts.adapters.importers.claude_code.plan import Append, Compact


def user(uuid: str, parent: str | None, text: str, **extra: Any) -> dict[str, Any]:
    message = {"role": "user", "content": text}
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "message": message, **extra}


def boundary(uuid: str, preserved: list[str]) -> dict[str, Any]:
    meta = {"trigger": "auto", "preTokens": 900, "postTokens": 50,
            "preservedMessages": {"allUuids": preserved}}  # fmt: skip
    return {"type": "system", "subtype": "compact_boundary", "uuid": uuid, "parentUuid": None,
            "compactMetadata": meta}  # fmt: skip


RECORDS = [
    user("u1", None, "one"),
    user("u2", "u1", "two"),
    boundary("b1", ["u2"]),
    user("a1", "b1", "an attachment's neighbour"),
]
SUMMARY = user("s1", "a1", "Summary.", isCompactSummary=True)


def test_a_boundary_waits_for_its_summary_unless_the_records_are_final() -> None:
    waiting = plan_records(RECORDS, final=False)
    assert [type(step) for step in waiting.steps] == [Append, Append]
    assert waiting.pending == 2
    final = plan_records(RECORDS)
    assert final.steps[2].replacement == [final.steps[1].message]  # no summary: kept only
    assert final.notes == ["compact boundary b1 has no summary"]
    done = plan_records([*RECORDS, SUMMARY], final=False)
    compact = done.steps[2]
    assert isinstance(compact, Compact)
    assert [m["id"] for m in compact.replacement] == ["s1", "u2"]
    assert (compact.tokens_before, compact.tokens_after) == (900, 50)
    assert done.active == ["s1", "u2", "a1"]


def test_a_copy_is_counted_once_and_a_branch_is_noted() -> None:
    plan = plan_records([*RECORDS[:2], user("u1", None, "one"), user("u3", "u1", "three")])
    assert plan.duplicates == 1
    assert plan.active == ["u1", "u2", "u3"]
    assert plan.notes and "do not continue the record before them" in plan.notes[0]
