"""Child-process program for tests/integration/test_search_catch_up.py: a store process
that searches once, when the parent says so.

Run as a script, never imported by the package:

    python searcher.py URL QUERY

It opens the store, prints `ready` and waits for `go` on stdin; then it searches QUERY
(every hit) and prints the ids of the messages found, as one JSON object, its last line.
"""

from __future__ import annotations

import sys

from parent import say, wait_for_go


def main(url: str, query: str) -> None:
    from transcripts import TranscriptStore

    with TranscriptStore.open(url) as store:
        say("ready")
        wait_for_go()
        hits = store.search(query, limit=100_000)
        say({"found": sorted(hit["message_id"] for hit in hits)})


if __name__ == "__main__":
    main(*sys.argv[1:])
