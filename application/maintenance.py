"""Keeping the views in shape: verifying them against the log, following it in the background.

Rebuild, catch-up and status are the views' own (see `projections.views`); verification
folds each session's log independently of the projector (`projections.fold`) and names
every difference (`projections.verify`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..projections.fold import SessionFold
from ..projections.verify import VerifyReport, compare_session, quarantine_problems
from ..projections.views import TranscriptViews
from .event_log import TranscriptLog


def verify(log: TranscriptLog, views: TranscriptViews) -> VerifyReport:
    """Diff every view against an independent fold of the log.

    Events that cannot be decoded or applied are left out of the fold, as the views leave
    them out: they are reported as quarantined.
    """
    in_log = list(log.session_ids())
    known = set(in_log)
    sessions = [*in_log, *(s for s in views.session_ids() if s not in known)]
    problems = quarantine_problems(views.quarantined())
    for session_id in sessions:
        events = log.readable_events(session_id) if session_id in known else None
        fold = SessionFold.of_readable(events) if events is not None else None
        problems += compare_session(session_id, fold, views.rows(session_id))
    return VerifyReport(sessions=len(sessions), problems=problems)


@contextmanager
def in_background(follow: Callable[[threading.Event], int]) -> Iterator[None]:
    """Run `follow(stop)` in a thread while the block runs; its failure is raised at the end."""
    stop = threading.Event()
    failures: list[BaseException] = []

    def run() -> None:
        try:
            follow(stop)
        except BaseException as error:
            failures.append(error)

    follower = threading.Thread(target=run, name="transcripts-follower", daemon=True)
    follower.start()
    try:
        yield
    finally:
        stop.set()
        follower.join()
    if failures:
        raise failures[0]
