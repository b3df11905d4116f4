"""Following a PostgreSQL store's log live, with the library's subscription (LISTEN/NOTIFY).

A notification only says that the log has grown: each wakes a catch-up (`CatchUp`), which
projects the entries after the tracked mark in the log's order, a batch per transaction,
exactly once whoever projects them (followers, or queries catching up). Entries the order
cannot take yet (their transaction is younger than one still running) are looked for again
after a short wait, notified or not.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from eventsourcing.persistence import Notification, PersistenceError
from eventsourcing.postgres import PostgresApplicationRecorder

from ....application import retry
from ....domain.errors import StorageError
from ..sql.catch_up import BATCH_SIZE, TRACKING_NAME, CatchUp, Followed

ARRIVALS_WAIT = 0.1  # seconds between checks of the stop event while nothing arrives


class LogFollower:
    """Follows the log of one recorder (the views' `Follower`)."""

    def __init__(self, recorder: PostgresApplicationRecorder) -> None:
        self.recorder = recorder
        self.lock_timeout = max(1, recorder.datastore.lock_timeout)  # the library's 0: forever

    def __call__(
        self,
        catch_up: CatchUp,
        stop: threading.Event,
        on_batch: Followed | None,
        keep_warm: Callable[[], int],
    ) -> int:
        """Keep the views up to date, and after each batch (or wait) the search index
        (`keep_warm`), until `stop` is set; return how many events were projected."""
        done = 0
        while not stop.is_set() and (count := catch_up.next_batch()):  # the backlog
            done += count
            if on_batch is not None:
                on_batch(count)
        with catch_up.dialect.reading() as c:
            start = catch_up.dialect.tracked(c, TRACKING_NAME)
        arrivals: queue.Queue[Notification | BaseException | None] = queue.Queue(
            maxsize=2 * BATCH_SIZE
        )
        with self.recorder.subscribe(gt=start) as subscription:
            forwarder = threading.Thread(
                target=_forward, args=(subscription, arrivals, stop), daemon=True
            )
            forwarder.start()
            try:
                behind = True
                while not stop.is_set():
                    if _arrived(arrivals) or behind:
                        count, behind = _catch_up(catch_up, on_batch, self.lock_timeout)
                        done += count
                    keep_warm()
            finally:
                subscription.stop()
        forwarder.join()
        return done


def _catch_up(
    catch_up: CatchUp, on_batch: Followed | None, lock_timeout: float
) -> tuple[int, bool]:
    """Project what the log's order can take now, a batch at a time; return how many
    entries, and whether the views are still behind the log (entries it cannot take yet)."""
    error: PersistenceError | None = None
    done = 0
    for _ in retry.attempts(lock_timeout):
        try:
            while count := catch_up.next_batch():
                done += count
                if on_batch is not None:
                    on_batch(count)
            with catch_up.dialect.reading(snapshot=False) as c:
                return done, not catch_up.is_current(c)
        except PersistenceError as failed:  # the lock, or a lost connection: again
            error = failed
    raise StorageError(f"cannot project the views: {error}")


def _forward(
    subscription: Any,
    arrivals: queue.Queue[Notification | BaseException | None],
    stop: threading.Event,
) -> None:
    """Move the subscription's notifications to `arrivals`; then None, or the error."""
    last: BaseException | None = None
    try:
        for notification in subscription:
            while not stop.is_set():
                try:
                    arrivals.put(notification, timeout=ARRIVALS_WAIT)
                    break
                except queue.Full:
                    continue
            if stop.is_set():
                return
    except BaseException as error:
        last = error
    while not stop.is_set():
        try:
            arrivals.put(last, timeout=ARRIVALS_WAIT)
            return
        except queue.Full:
            continue


def _arrived(arrivals: queue.Queue[Notification | BaseException | None]) -> bool:
    """Whether anything arrived (waiting a little for it); every arrival is taken."""
    try:
        item = arrivals.get(timeout=ARRIVALS_WAIT)
    except queue.Empty:
        return False
    while True:
        if item is None:
            raise StorageError("the subscription to the log ended")
        if isinstance(item, BaseException):
            raise StorageError(f"the subscription to the log failed: {item}") from item
        try:
            item = arrivals.get_nowait()
        except queue.Empty:
            return True
