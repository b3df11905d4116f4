"""Child-process programs for tests/processes/test_multiple_processes.py (and
test_postgres_processes.py).

Run as a script, never imported by the package:

    python workers.py append  URL SESSION INDEX SHARED_PREFIX
    python workers.py open-fresh URL_TEMPLATE INDEX ROUNDS   (URL_TEMPLATE contains {round})
    python workers.py compact URL SESSION INDEX
    python workers.py hold-lock DB_PATH SECONDS
    python workers.py append-loop URL SESSION WARMUP (until the parent writes `stop`)
    python workers.py reopen URL SESSION ROUNDS

Coordination with the parent is line-based over the pipes, so it needs no sleeps: a child
prints a status line (`ready`, `begun ...`, `locked`) and, where the test needs a barrier,
blocks reading its stdin until the parent writes `go`. The last stdout line of a worker is
its result as JSON. Any exception escapes, so it shows on stderr with a non-zero exit code.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
import time

from parent import say, wait_for_go

MESSAGES_PER_WORKER = 50
ANONYMOUS = 20  # messages without an id: the store gives each a new one
OWN_IDS = 15  # messages with an id only this worker uses
SHARED = 15  # messages every worker appends with the same id and the same content
BATCH_SIZES = (1, 4, 2, 3)  # messages per `append` call, in turn; kinds mixed in a call


def planned_messages(index: int, shared_prefix: str) -> list[dict]:
    """The 50 messages worker `index` appends, interleaving the three kinds."""
    anonymous = [
        {"role": "user", "content": f"worker {index} anonymous {k}"} for k in range(ANONYMOUS)
    ]
    own = [
        {"id": f"w{index}-m{k}", "role": "assistant", "content": f"worker {index} own {k}"}
        for k in range(OWN_IDS)
    ]
    # Every worker starts the shared block at another offset, so the same ids collide
    # at different moments in different processes.
    shared = [
        {
            "id": f"{shared_prefix}-{k}",
            "role": "user",
            "content": [{"type": "text", "text": f"shared {k}"}],
        }
        for k in range(SHARED)
    ]
    offset = index * 4 % SHARED
    shared = shared[offset:] + shared[:offset]
    messages: list[dict] = []
    while anonymous or own or shared:
        for source in (anonymous, own, shared):
            if source:
                messages.append(source.pop(0))
    assert len(messages) == MESSAGES_PER_WORKER
    return messages


def append_worker(url: str, session_id: str, index: int, shared_prefix: str) -> None:
    from transcripts import TranscriptStore

    messages = planned_messages(index, shared_prefix)
    with TranscriptStore.open(url) as store:
        say("ready")
        wait_for_go()
        store.start(session_id, source="e2e")  # a no-op when another process started it
        stored: list[dict] = []
        start, calls = 0, 0
        while start < len(messages):
            batch = messages[start : start + BATCH_SIZES[calls % len(BATCH_SIZES)]]
            start, calls = start + len(batch), calls + 1
            returned = store.append(session_id, batch)
            if len(returned) != len(batch):
                raise AssertionError(f"append returned {len(returned)} of {len(batch)} messages")
            stored.extend(returned)
    say(json.dumps({"sent": messages, "stored": stored}))


def open_fresh_worker(url_template: str, index: int, rounds: int) -> None:
    """Per round: at the parent's signal, open a store file nobody created yet, and write."""
    from transcripts import TranscriptStore

    urls = []
    for round_ in range(rounds):
        say("ready")
        wait_for_go()
        url = url_template.format(round=round_)
        with TranscriptStore.open(url) as store:
            store.start(f"session-{index}", source="e2e")
            store.append(f"session-{index}", [{"role": "user", "content": f"round {round_}"}])
        urls.append(url)
    say(json.dumps({"urls": urls}))


def compact_worker(url: str, session_id: str, index: int) -> None:
    from transcripts import TranscriptStore

    with TranscriptStore.open(url) as store:
        attempt = store.begin_compaction(session_id)
        snapshot = [message["id"] for message in attempt.messages]
        begun = {"id": attempt.id, "version": attempt.version, "snapshot": snapshot}
        say("begun " + json.dumps(begun))
        wait_for_go()  # every worker has begun: all attempts share one version
        summary = {"role": "system", "content": f"summary by worker {index}"}
        reason = f"worker {index}"
        result = store.commit_compaction(attempt, [summary], reason=reason)
    say(
        json.dumps(
            {
                "attempt": attempt.id,
                "version": attempt.version,
                "snapshot": snapshot,
                "summary": summary,
                "reason": reason,
                "committed": result.committed,
                "compaction_id": result.compaction_id,
                "failure": result.failure,
                "error": result.error,
                "messages": result.messages,
            }
        )
    )


def hold_lock(db_path: str, seconds: float) -> None:
    """Hold SQLite's write lock (BEGIN IMMEDIATE) for `seconds`, then roll back."""
    connection = sqlite3.connect(db_path, isolation_level=None, timeout=10)
    connection.execute("BEGIN IMMEDIATE")
    held_at = time.monotonic()
    say("locked")
    time.sleep(seconds)
    connection.execute("ROLLBACK")
    connection.close()
    say(json.dumps({"held": time.monotonic() - held_at}))


def append_loop(url: str, session_id: str, warmup: int) -> None:
    """Append one message per call in a tight loop until the parent writes `stop`, saying
    `ready` after `warmup` calls; the result is how many calls were made."""
    from transcripts import TranscriptStore

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
    calls = 0
    with TranscriptStore.open(url) as store:
        store.start(session_id, source="e2e")
        while not stop.is_set():
            store.append(session_id, [{"role": "user", "content": f"hot {calls}"}])
            calls += 1
            if calls == warmup:
                say("ready")
    say(json.dumps({"calls": calls}))


def reopen_worker(url: str, session_id: str, rounds: int) -> None:
    """Keep a store open and, each round, append through it and through a second store of
    the same file opened and closed meanwhile; the result is the ids stored."""
    from transcripts import TranscriptStore

    ids = []
    with TranscriptStore.open(url) as kept:
        kept.start(session_id, source="e2e")
        say("ready")
        wait_for_go()
        for round_ in range(rounds):
            ids += [m["id"] for m in kept.append(session_id, [{"role": "user", "content": "kept"}])]
            with TranscriptStore.open(url) as opened:
                message = {"role": "user", "content": f"round {round_}"}
                ids += [m["id"] for m in opened.append(session_id, [message])]
    say(json.dumps({"ids": ids}))


def main(argv: list[str]) -> None:
    command, *args = argv
    if command == "append":
        url, session_id, index, shared_prefix = args
        append_worker(url, session_id, int(index), shared_prefix)
    elif command == "open-fresh":
        url_template, index, rounds = args
        open_fresh_worker(url_template, int(index), int(rounds))
    elif command == "compact":
        url, session_id, index = args
        compact_worker(url, session_id, int(index))
    elif command == "append-loop":
        url, session_id, warmup = args
        append_loop(url, session_id, int(warmup))
    elif command == "reopen":
        url, session_id, rounds = args
        reopen_worker(url, session_id, int(rounds))
    elif command == "hold-lock":
        db_path, seconds = args
        hold_lock(db_path, float(seconds))
    else:
        raise SystemExit(f"unknown worker command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
