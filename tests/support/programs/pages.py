"""Child-process program for tests/processes/test_consistent_pages.py: a writer changing a
session's active context every way there is, or a reader of it a page at a time.

Run as a script, never imported by the package:

    python pages.py write URL SESSION SECONDS SEED
    python pages.py read URL SESSION SECONDS TAIL

Each prints `ready` and waits for `go`, then runs for SECONDS. The writer appends, compacts,
rewinds, and restores what it rewound (often right after the rewind, all of it: a rewind of
3 and 3 restores leave as many messages rewound as before). The reader reads the whole
context (`iter_active`), its first and its last TAIL messages, in pages of 2 or 3, and prints
one JSON line per read: {"kind", "ids"} or {"kind", "refused"} (a `TranscriptError`). The
last line of either is `{"done": N}`.
"""

from __future__ import annotations

import random
import sys
import time

from parent import say, wait_for_go


def write(url: str, session: str, seconds: float, seed: int) -> None:
    from transcripts import TranscriptStore

    rng = random.Random(seed)
    done = 0
    with TranscriptStore.open(url) as store:
        say("ready")
        wait_for_go()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            active = store.active(session)
            choice = rng.random()
            if choice < 0.3 or len(active) < 8:
                store.append(
                    session, [{"role": "user", "content": f"w{seed} {done} {k}"} for k in range(2)]
                )
            elif choice < 0.45 and len(active) > 16:
                keep = rng.randint(3, 8)
                summary = {"role": "system", "content": f"summary {done}"}
                store.compact(session, lambda live, s=summary, k=keep: [s, *live[-k:]])
            else:
                taken = store.rewind(session, count=rng.randint(1, 3))
                if choice < 0.9:  # put back what it took: the rewound count is as before
                    store.append(session, taken)
            done += 1
    say({"done": done})


def read(url: str, session: str, seconds: float, tail: int) -> None:
    from transcripts import TranscriptError, TranscriptStore

    rng = random.Random(tail)
    done = 0
    with TranscriptStore.open(url) as store:
        say("ready")
        wait_for_go()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            kind = rng.choice(["head", "limit", "tail"])
            window = {"head": {}, "limit": {"limit": tail}, "tail": {"tail": tail}}[kind]
            try:
                pages = store.iter_active(session, page_size=rng.randint(2, 3), **window)
                say({"kind": kind, "ids": [message["id"] for message in pages]})
            except TranscriptError as error:
                say({"kind": kind, "refused": str(error)[:100]})
            done += 1
    say({"done": done})


if __name__ == "__main__":
    operation, url, session, seconds, number = sys.argv[1:]
    if operation == "write":
        write(url, session, float(seconds), int(number))
    else:
        read(url, session, float(seconds), int(number))
