"""The kubelet's PodResources rate limit.

Mirrors ``pkg/kubelet/apis/grpc/ratelimit.go`` and the constants of
``pkg/kubelet/apis/podresources/constants.go``: one token bucket for the
whole server (``golang.org/x/time/rate``: ``DEFAULT_QPS`` tokens a second,
``DEFAULT_BURST`` at most, the bucket starts full), consulted once per unary
call before its handler; a call that finds no token fails with
``ResourceExhausted`` and the text ``rejected by rate limit``. Not
configurable in the kubelet; the clock (nanoseconds) is injectable here for tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["DEFAULT_QPS", "DEFAULT_BURST", "LIMIT_EXCEEDED_MESSAGE", "TokenBucket"]

DEFAULT_QPS = 100
DEFAULT_BURST = 10
LIMIT_EXCEEDED_MESSAGE = "rejected by rate limit"


class TokenBucket:
    """``rate.Limiter.Allow``: refill at ``qps`` tokens a second up to
    ``burst``, spend one per allowed event."""

    def __init__(
        self,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self._qps = float(qps)
        self._burst = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()
        self._lock = threading.Lock()

    def allow(self) -> bool:
        with self._lock:
            now = self._clock()
            elapsed_ns = max(0, now - self._last)
            self._last = now
            # Durations in whole nanoseconds, as Go's time.Duration.
            self._tokens = min(self._burst, self._tokens + elapsed_ns / 1e9 * self._qps)
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            return False
