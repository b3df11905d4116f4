"""Retrying writes under contention: exponential backoff with full jitter, up to a deadline."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

FIRST_DELAY = 0.002
MAX_DELAY = 0.25


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
