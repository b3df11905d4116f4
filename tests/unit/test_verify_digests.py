"""The fold verify uses (digests, its history in columns) against the whole fold, on generated
histories with compactions, failed attempts, rewinds and restores: it says the same of every
message, and `compare_session` finds the same problems with it in the same damaged rows."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from support.events import collect, commit, start
from support.fold_rows import rows_of
from transcripts.application.maintenance import message_digest
from transcripts.domain.errors import TranscriptError
from transcripts.domain.messages import with_id
from transcripts.domain.transcript import Transcript
from transcripts.projections.fold import SessionFold
from transcripts.projections.verify import Problem, compare_session

# Ids of every kind a key is made of: short, non-ASCII, longer than a key holds whole.
ID_STEMS = st.sampled_from(["m", "ü-", "🙂", "x" * 70, "y" * 40 + "é" * 20])
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 6)),
        st.tuples(st.just("rewind"), st.integers(1, 4)),
        st.tuples(st.just("restore"), st.integers(0, 20)),
        st.tuples(st.just("compact"), st.integers(0, 4)),
        st.tuples(st.just("fail"), st.integers(0, 3)),
    ),
    max_size=25,
)
FIELDS = [
    "role", "active", "superseded_by", "added_by", "appended_at", "appended_version",
    "rewound_version", "restored_version",
]  # fmt: skip


def history(stem: str, steps: list[tuple[str, int]]) -> list[Transcript.Event]:
    """A session made by the steps (a step the transcript refuses is left out)."""
    transcript, messages, rewound = start("s"), {}, []
    for number, (step, count) in enumerate(steps):
        try:
            if step == "append":
                roles = ["user", "assistant"]
                new = [
                    {"id": f"{stem}{number}.{n}", "role": roles[n % 2], "content": n}
                    for n in range(count)
                ]
                messages.update((m["id"], m) for m in new)
                transcript.append(new)
            elif step == "rewind":
                gone = transcript.rewind_target(count=count, to=None)
                rewound += transcript.rewind(gone, reason="undo")
            elif step == "restore" and rewound:
                transcript.append([messages[rewound.pop(count % len(rewound))]])
            elif step == "compact":
                active = list(transcript.active)
                kept = [messages[i] for i in active[len(active) - count :]] if count else []
                summary = {"role": "system", "content": f"summary {number}"}
                commit(transcript, [summary, *kept], compaction_id=f"cmp-{number}")
                messages.update((i, {"id": i, **summary}) for i in transcript.active[:1])
            elif step == "fail":
                transcript.fail_compaction(
                    compaction_id=f"fail-{number}", based_on_version=transcript.version,
                    failure="conflict", error="late", reason="",
                    would_supersede=list(transcript.active)[:count],
                )  # fmt: skip
        except (TranscriptError, ValueError):
            continue
    return collect(transcript)


def folds(events: list[Transcript.Event]) -> tuple[SessionFold, SessionFold]:
    whole, digests = SessionFold(), SessionFold(digest=message_digest)
    for event in events:
        whole.apply(event)
        digests.apply(event)
    return whole, digests


def found(problems: list[Problem]) -> list[tuple[str, str, str]]:
    return [(p.view, p.kind, p.key) for p in problems]


@settings(max_examples=200, deadline=None)
@given(ID_STEMS, STEPS)
def test_the_fold_of_digests_says_what_the_whole_fold_says_of_every_message(
    stem: str, steps: list[tuple[str, int]]
) -> None:
    whole, digests = folds(history(stem, steps))
    assert list(digests.ids()) == list(whole.entries)
    for message_id, entry in whole.entries.items():
        kept = digests.entries[message_id]
        assert {f: getattr(kept, f) for f in FIELDS} == {f: getattr(entry, f) for f in FIELDS}
        assert kept.digest == message_digest(with_id(message_id, entry.contents()))
    assert digests.active_ids == whole.active_ids
    assert [len(c["superseded"]) for c in digests.compactions] == [
        len(c["superseded"]) for c in whole.compactions
    ]
    assert compare_session("s", digests, rows_of(whole)) == []


def damaged(rows: Any, data: st.DataObject) -> Any:
    """The rows with one of them changed, removed or moved."""
    view = data.draw(st.sampled_from([v for v in ("active", "history") if getattr(rows, v)]))
    listed = getattr(rows, view)
    index = data.draw(st.integers(0, len(listed) - 1))
    row = listed[index]
    damage = data.draw(st.sampled_from(["message", "remove", "move", "field"]))
    if damage == "remove":
        del listed[index]
    elif damage == "move":
        listed.insert(data.draw(st.integers(0, len(listed) - 1)), listed.pop(index))
    elif damage == "message":
        listed[index] = dataclasses.replace(row, message={**row.message, "content": "forged"})
    elif view == "history":
        field = data.draw(st.sampled_from(FIELDS[1:]))
        value = data.draw(st.sampled_from([None, True, 3, "cmp-0"]))
        listed[index] = dataclasses.replace(row, **{field: value})
    else:
        listed[index] = dataclasses.replace(row, role="forged")
    return rows


@settings(max_examples=200, deadline=None)
@given(ID_STEMS, STEPS, st.data())
def test_the_fold_of_digests_finds_the_problems_the_whole_fold_finds_in_damaged_rows(
    stem: str, steps: list[tuple[str, int]], data: st.DataObject
) -> None:
    whole, digests = folds(history(stem, steps))
    if not whole.entries:
        return
    rows = damaged(rows_of(whole), data)  # lists: each compare reads them whole
    expected = compare_session("s", whole, rows)
    assert found(compare_session("s", digests, rows)) == found(expected)
