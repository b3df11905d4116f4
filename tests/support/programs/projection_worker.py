"""Child-process program for tests/processes/test_catch_up_crash.py: a store process that projects
the views and is killed (SIGKILL) at a moment the parent chooses.

Run as a script, never imported by the package:

    python projection_worker.py catch-up|rebuild URL MODE

It opens the store (which catches the views up), prints `ready` and waits for `go` on stdin;
the parent writes events behind the views meanwhile. Then it runs `catch_up_projections` or
`rebuild_projections` with a progress callback that prints `progress DONE TOTAL` per batch.
MODE says where it stops for the parent to kill it:
- `between-batches`: in the progress callback of the second batch (the batch is committed);
- `inside-a-batch`: inside the third batch's transaction, which holds the write lock (the
  projector blocks in `project`);
- `running`: nowhere: the parent kills it while it runs.
A stopped worker prints `paused` and blocks reading stdin. At the end it prints `done N`.
"""

from __future__ import annotations

import sys

from parent import say, wait_for_go


def block() -> None:
    say("paused")
    sys.stdin.readline()  # the parent never answers: it kills this process
    raise SystemExit("the parent answered a paused worker")


def main(operation: str, url: str, mode: str) -> None:
    from transcripts import TranscriptStore
    from transcripts.projections.projector import Projector

    first: int | None = None  # the log position of the first entry projected once armed

    class PausingProjector(Projector):  # the same view versions: opening does not rebuild
        def project(self, entries):  # type: ignore[no-untyped-def]
            # A batch of 1,000 entries is projected a segment at a time (a committed
            # compaction ends one): the third batch begins 2,000 entries after the first.
            nonlocal first
            if armed and entries:
                first = entries[0].position if first is None else first
                if mode == "inside-a-batch" and entries[0].position >= first + 2000:
                    block()
            return super().project(entries)

    def progress(done: int, total: int) -> None:
        say(f"progress {done} {total}")
        if mode == "between-batches" and done >= 2000:
            block()

    armed = False
    with TranscriptStore.open(url, projector=PausingProjector) as store:
        say("ready")
        wait_for_go()
        armed = True
        if operation == "catch-up":
            count = store.catch_up_projections(progress)
        elif operation == "rebuild":
            count = store.rebuild_projections(progress)
        else:
            raise SystemExit(f"unknown operation {operation!r}")
    say(f"done {count}")


if __name__ == "__main__":
    main(*sys.argv[1:])
