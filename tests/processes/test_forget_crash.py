"""A process killed (SIGKILL) while it forgets sessions leaves each session whole or only its
tombstone: never a half-erased stream, and no byte of a session whose `forget` returned."""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

import pytest

from support.processes import Spawn
from transcripts import TranscriptStore

RUNS = int(os.environ.get("TRANSCRIPTS_CRASH_RUNS", "1")) * 6
MESSAGES = 60

CHILD = """
import sys
from transcripts import TranscriptStore
url, run, messages = sys.argv[1], sys.argv[2], int(sys.argv[3])
with TranscriptStore.open(url) as store:
    for k in range(1000):
        session = f"{run}-{k}"
        store.start(session, metadata={"m": f"mark{run}x{k}q"})
        store.append(session, [{"role": "user", "content": f"mark{run}x{k}q {i}"}
                               for i in range(messages)])
        print("filled", session, flush=True)
        store.forget(session)
        print("forgot", session, flush=True)
"""


@pytest.mark.slow
def test_a_process_killed_while_it_forgets_leaves_each_session_whole_or_only_its_tombstone(
    tmp_path: Path, spawn: Spawn
) -> None:
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    TranscriptStore.open(url).close()
    rng = random.Random(os.environ.get("TRANSCRIPTS_CRASH_SEED", "forget"))
    forgot: list[str] = []
    for run in range(RUNS):
        child = spawn(f"forget-{run}", [sys.executable, "-c", CHILD, url, f"r{run}", str(MESSAGES)])
        for _ in range(rng.randrange(1, 4)):  # a few sessions, then kill inside the next one
            child.expect("filled")
            forgot.append(child.expect("forgot"))
        child.expect("filled")  # the next forget is starting
        time.sleep(rng.uniform(0, 0.03))
        child.kill()
    with TranscriptStore.open(url) as store:
        shapes = {}
        for session in store.sessions():
            types = [event["type"] for event in store.events(session["id"])]
            whole = ["Started", *["MessageAppended"] * MESSAGES]  # or killed before its append
            assert types in (["Erased"], whole, ["Started"]), (session["id"], types)
            shapes[session["id"]] = "erased" if types == ["Erased"] else "whole"
        assert all(shapes[session] == "erased" for session in forgot)
        report = store.verify_projections()
        assert report.ok, [str(problem) for problem in report.problems]
        store.rebuild_projections()
        assert store.verify_projections().ok
    data = b"".join(file.read_bytes() for file in (path, Path(f"{path}-wal")) if file.exists())
    # "mark<run>x<k>q": the q ends it, so session r4-1's marker does not match r4-10's
    left = [session for session in forgot if f"mark{session.replace('-', 'x')}q".encode() in data]
    assert left == []
