"""Jobs awaited on an event loop (what the server's endpoints do): the same
warm job processes, limits and answers as jobs waited for in a thread, the
job processes shared between the two, and no slot ever lost."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest

from podnuma.web.worker import Busy, JobError, Limits, TimeLimitExceeded, WorkerPool, _Slots


def _sleep(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def test_awaited_jobs_share_the_warm_processes_and_their_limits() -> None:
    pool = WorkerPool(Limits(time_limit=5, workers=2))
    pool.warm_up()

    async def main() -> None:
        pids = await asyncio.gather(*(pool.run_async(os.getpid) for _ in range(12)))
        assert len(set(pids)) <= 2 and os.getpid() not in pids
        # the same processes as jobs waited for in a thread
        assert pool.run(os.getpid) in pids
        assert await pool.run_async(sum, [1, 2, 3]) == 6
        with pytest.raises(JobError):
            await pool.run_async(os.listdir, "/")  # the sandbox
        with pytest.raises(TimeLimitExceeded):
            await pool.run_async(_sleep, 30.0)
        fresh = await asyncio.gather(*(pool.run_async(os.getpid) for _ in range(4)))
        assert len(set(fresh)) <= 2

    try:
        asyncio.run(main())
    finally:
        pool.kill_all()


def test_a_request_waits_at_most_the_time_limit_for_a_process() -> None:
    pool = WorkerPool(Limits(time_limit=3, workers=1))
    pool.warm_up()

    async def main() -> None:
        running = asyncio.ensure_future(pool.run_async(_sleep, 1.0))
        await asyncio.sleep(0.2)
        # waits for the busy process (its job ends within the limit)...
        assert await pool.run_async(os.getpid) == await running
        hold = asyncio.ensure_future(pool.run_async(_sleep, 2.0))
        await asyncio.sleep(0.05)
        busy = asyncio.ensure_future(pool.run_async(_sleep, 2.0))
        await asyncio.sleep(0.05)
        with pytest.raises(Busy):  # ...but not longer than the limit
            await pool.run_async(os.getpid)
        await hold
        await busy
        assert await pool.run_async(sum, [2]) == 2  # no slot lost

    try:
        asyncio.run(main())
    finally:
        pool.kill_all()


def test_slots_go_first_come_first_served_and_none_is_lost() -> None:
    slots = _Slots(1)
    order: list[str] = []

    async def main() -> None:
        held = await slots.get_async(1)

        async def wait(name: str, timeout: float) -> None:
            got = await slots.get_async(timeout)
            order.append(name)
            await asyncio.sleep(0.01)
            slots.put(got)

        first = asyncio.ensure_future(wait("first", 5))
        await asyncio.sleep(0.01)
        gone = asyncio.ensure_future(wait("gone", 5))
        await asyncio.sleep(0.01)
        second = asyncio.ensure_future(wait("second", 5))
        late = asyncio.ensure_future(wait("late", 0.05))
        await asyncio.sleep(0.01)
        gone.cancel()  # stops waiting: never served
        # a thread waits too
        in_thread: list[object] = []
        thread = threading.Thread(target=lambda: in_thread.append(slots.get(5)))
        thread.start()
        await asyncio.sleep(0.1)  # "late" times out meanwhile
        slots.put(held)
        await first
        await second
        with pytest.raises(asyncio.CancelledError):
            await gone
        with pytest.raises(TimeoutError):
            await late
        await asyncio.to_thread(thread.join, 5)
        assert in_thread == [held]
        slots.put(held)
        assert await slots.get_async(0.1) is held  # the one slot is still there
        slots.put(held)

    asyncio.run(main())
    assert order == ["first", "second"]
