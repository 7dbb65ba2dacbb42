"""A client-side rate limit: at most ``max_calls`` calls in any ``period`` seconds.

Cloud Logging allows about 60 ``entries.list`` requests a minute per project. A sliding
window (rather than a fixed interval between calls) lets a short collect run at full
speed, and still never puts more than ``max_calls`` requests in any window of
``period`` seconds, which is what a per-minute quota counts, however the server aligns
its minutes.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable


class SlidingWindowLimiter:
    """Blocks :meth:`acquire` until a call fits under ``max_calls`` per ``period`` seconds.

    ``clock`` and ``sleep`` default to :func:`time.monotonic` and :func:`time.sleep`; tests
    pass fakes. Thread-safe. Raises :class:`ValueError` for ``max_calls < 1`` or
    ``period <= 0``.
    """

    def __init__(
        self,
        max_calls: int,
        period: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_calls < 1:
            raise ValueError(f"max_calls must be at least 1, got {max_calls}")
        if period <= 0:
            raise ValueError(f"period must be positive, got {period}")
        self.max_calls = max_calls
        self.period = period
        self._clock = clock
        self._sleep = sleep
        self._calls: deque[float] = deque()
        self._lock = threading.Lock()
        #: Total seconds :meth:`acquire` has waited.
        self.waited_s = 0.0

    def acquire(self) -> float:
        """Wait until one more call is allowed, record it, and return the seconds waited."""
        waited = 0.0
        with self._lock:
            while True:
                now = self._clock()
                while self._calls and self._calls[0] <= now - self.period:
                    self._calls.popleft()
                if len(self._calls) < self.max_calls:
                    self._calls.append(now)
                    self.waited_s += waited
                    return waited
                # The oldest call in the window leaves it at calls[0] + period.
                delay = self._calls[0] + self.period - now
                self._sleep(delay)
                waited += delay
