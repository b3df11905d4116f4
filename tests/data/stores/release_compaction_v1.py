"""Writes `release_compaction_v1.db` with the release before `CompactionCommitted` version 2
(commit f267a41), whose commits list the ids they supersede. Run with that release first on
the path:

    mkdir -p /tmp/old/transcripts && git archive f267a41 | tar -x -C /tmp/old/transcripts
    PYTHONPATH=/tmp/old .venv/bin/python tests/data/stores/release_compaction_v1.py \
        tests/data/stores/release_compaction_v1.db
"""

import sys
from pathlib import Path
from typing import Any

import transcripts
from transcripts import TranscriptStore


def call(call_id: str) -> dict[str, Any]:
    function = {"name": "search", "arguments": "{}"}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


assert not hasattr(transcripts.domain, "committed"), "run it with the older release"
path = Path(sys.argv[1])
path.unlink(missing_ok=True)
with TranscriptStore.open(f"sqlite:///{path}") as store:
    s = "plan"
    store.start(
        s, source="old-release", model="gpt-x", metadata={"made": "by the release before v2"}
    )
    store.append(
        s,
        [
            {"id": f"p{i}", "role": ("user", "assistant")[i % 2], "content": f"turn {i}"}
            for i in range(1, 9)
        ],
    )
    store.append(s, [{"id": "c1", **call("call_1")}, {"id": "r1", **result("call_1", "found it")}])
    # 1: keeps the first message, the call and its result; one appended meanwhile stays behind
    attempt = store.begin_compaction(s)
    store.append(s, [{"id": "late", "role": "user", "content": "appended while summarizing"}])
    by_id = {m["id"]: m for m in attempt.messages}
    store.commit_compaction(
        attempt,
        [by_id["p1"], {"role": "system", "content": "summary one"}, by_id["c1"], by_id["r1"]],
        reason="first",
        tokens_before=900,
        tokens_after=120,
    )
    # a rewind, a restore, more turns
    store.append(
        s,
        [
            {"id": f"q{i}", "role": ("user", "assistant")[i % 2], "content": f"later {i}"}
            for i in range(1, 5)
        ],
    )
    store.rewind(s, count=2, reason="undo")
    store.append(s, [{"id": "q3", "role": "assistant", "content": "later 3"}])  # restored
    # a failed attempt
    store.compact(s, lambda msgs: 1 / 0, reason="broken summarizer")
    # 2: supersedes the first summary too, keeps the last two
    store.compact(
        s, lambda msgs: [{"role": "system", "content": "summary two"}, *msgs[-2:]], reason="second"
    )
    store.append(s, [{"id": "tail", "role": "user", "content": "after the second"}])
    # another session, compacted whole, then forgotten
    store.start("gone", source="old-release")
    store.append("gone", [{"id": "g1", "role": "user", "content": "secret"}])
    store.compact("gone", lambda msgs: [{"role": "system", "content": "secret summary"}])
    store.forget("gone")
    # a third: compacted twice in a row, nothing kept
    store.start("twice", source="old-release")
    store.append("twice", [{"id": f"t{i}", "role": "user", "content": f"t {i}"} for i in range(5)])
    store.compact("twice", lambda msgs: [{"role": "system", "content": "once"}])
    store.compact("twice", lambda msgs: [{"role": "system", "content": "twice"}])
    assert store.verify_projections().ok
    print([e["type"] for e in store.events(s)])
    print(store.active(s))
