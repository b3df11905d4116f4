"""Following a PostgreSQL store's log live, with the library's subscription (LISTEN/NOTIFY).

Each batch projects what has arrived, up to 1,000 events, in one transaction with its
tracked position. Events another process projected first are skipped, so every event is
projected exactly once, whoever projects it (followers, or queries catching up).
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
from ..sql.schema import LIVE

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
                while not stop.is_set():
                    batch = _next_batch(arrivals)
                    if batch:
                        count = _project_arrived(catch_up, batch, self.lock_timeout)
                        done += count
                        if count and on_batch is not None:
                            on_batch(count)
                    keep_warm()
            finally:
                subscription.stop()
        forwarder.join()
        return done


def _project_arrived(catch_up: CatchUp, batch: list[Notification], lock_timeout: float) -> int:
    dialect = catch_up.dialect
    error: PersistenceError | None = None
    for _ in retry.attempts(lock_timeout):
        try:
            with dialect.writing() as c:
                position = dialect.tracked(c, TRACKING_NAME)
                entries = [
                    catch_up.entry(n.id, n.originator_id, n.originator_version, n.topic, n.state)
                    for n in batch
                    if n.id > position
                ]
                if entries:
                    catch_up.project(c, LIVE, TRACKING_NAME, entries)
            return len(entries)
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


def _next_batch(arrivals: queue.Queue[Notification | BaseException | None]) -> list[Notification]:
    """What has arrived, up to a batch (waiting a little for the first one)."""
    try:
        first = arrivals.get(timeout=ARRIVALS_WAIT)
    except queue.Empty:
        return []
    batch: list[Notification] = []
    item: Notification | BaseException | None = first
    while True:
        if item is None:
            raise StorageError("the subscription to the log ended")
        if isinstance(item, BaseException):
            raise StorageError(f"the subscription to the log failed: {item}") from item
        batch.append(item)
        if len(batch) >= BATCH_SIZE:
            return batch
        try:
            item = arrivals.get_nowait()
        except queue.Empty:
            return batch
