"""Calls to storage, retried while waiting can cure them: exponential backoff with full jitter,
up to the lock timeout. Whatever they fail with reaches the caller as a `StorageError`.

The backend classifies each failure (`Failure`): the lock not obtained in time is retried
after a while, a dropped connection at once (on another connection: an idle one the server
dropped is found out by using it), and a version conflict like a lock; what waiting does not
cure (a full disk, a read-only file) fails at once. Retrying a write is safe because every
write is idempotent: message ids are chosen before the first attempt, and a compaction that
landed is seen as landed.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from eventsourcing.persistence import PersistenceError

from ..domain.errors import StorageError
from .storage import Failure

T = TypeVar("T")

FIRST_DELAY = 0.002
MAX_DELAY = 0.25
DROPPED_DELAY = 0.001  # after a dropped connection: the next try takes another one at once


def attempts(timeout: float) -> Iterator[int]:
    """Yield attempt numbers, sleeping between them, until `timeout` seconds have passed.

    The first attempt is immediate; the caller stops iterating once an attempt succeeds.
    """
    deadline = time.monotonic() + timeout
    number = 0
    while True:
        yield number
        number += 1
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        ceiling = min(MAX_DELAY, FIRST_DELAY * 2**number)
        time.sleep(min(remaining, random.uniform(0, ceiling)))


class StorageCalls:
    """Runs calls to one store's storage."""

    def __init__(self, classify: Callable[[BaseException], Failure], lock_timeout: float) -> None:
        self.classify = classify
        self.lock_timeout = lock_timeout

    def run(self, call: Callable[[], T], what: str) -> T:
        """`call()`, again after a failure waiting can cure, until the lock timeout (at once
        after a dropped connection); StorageError saying `what` could not be done otherwise."""
        deadline = time.monotonic() + self.lock_timeout
        try:
            return call()  # the first try, which almost always does: no more set up for it
        except PersistenceError as error:
            failure, failed = self._failure(error, what), error
        waits = attempts(deadline - time.monotonic())
        next(waits)  # the first try was made
        while True:
            if failure is Failure.DROPPED:
                if time.monotonic() >= deadline:
                    break
                time.sleep(DROPPED_DELAY)
            elif next(waits, None) is None:
                break
            try:
                return call()
            except PersistenceError as error:
                failure, failed = self._failure(error, what), error
        cause = "other writers kept winning the race" if failure is Failure.CONFLICT else failed
        raise StorageError(f"could not {what} within {self.lock_timeout:g} s: {cause}") from failed

    def _failure(self, error: PersistenceError, what: str) -> Failure:
        """What the failure means; StorageError at once if waiting does not cure it."""
        failure = self.classify(error)
        if failure is Failure.LASTING:
            raise StorageError(f"cannot {what}: {error}") from error
        return failure
