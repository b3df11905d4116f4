"""Recipe: rebuild the views after a bug.

The views (plain SQL tables) are a projection of the event log. When a bug, or a hand edit,
leaves them wrong, `verify` finds it and `rebuild` replays the log into fresh views. Here a
row is deleted by hand to stand for the bug.

Run: python examples/rebuild_views.py [FILE]   (default: views.db, a SQLite file)
The same on the command line:
    transcripts --db sqlite:///views.db projections verify
    transcripts --db sqlite:///views.db projections rebuild
"""

from __future__ import annotations

import sqlite3
import sys

from transcripts import TranscriptStore


def main(path: str) -> None:
    url = f"sqlite:///{path}"
    with TranscriptStore.open(url) as store:
        store.start("s1")
        store.append("s1", [{"role": "user", "content": f"message {n}"} for n in range(5)])

    with sqlite3.connect(path) as database:  # the "bug": a view row lost
        database.execute("DELETE FROM message_history WHERE seq = 3")

    with TranscriptStore.open(url) as store:
        report = store.verify_projections()
        print(f"verify: ok={report.ok}, {len(report.problems)} problem(s)")
        for problem in report.problems:
            print(f"  {problem.view} {problem.kind}: {problem.key}")
        store.rebuild_projections()
        print(f"after rebuild: ok={store.verify_projections().ok}")
        print(f"active messages: {len(store.active('s1'))}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "views.db")
