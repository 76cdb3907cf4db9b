"""CallLimiter: the max_concurrency limit holds across event loops and survives give-ups."""

from __future__ import annotations

import asyncio
import threading

from compiler.runtime.api.concurrency import CallLimiter


class Counter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.done = 0

    async def hold(self, limiter: CallLimiter, seconds: float) -> None:
        async with limiter.slot():
            with self.lock:
                self.now += 1
                self.most = max(self.most, self.now)
            await asyncio.sleep(seconds)
            with self.lock:
                self.now -= 1
                self.done += 1


def test_the_limit_holds_across_loops_in_several_threads() -> None:
    limiter, counter = CallLimiter(3), Counter()

    def run_loop() -> None:
        async def many() -> None:
            await asyncio.gather(*(counter.hold(limiter, 0.02) for _ in range(10)))

        asyncio.run(many())

    threads = [threading.Thread(target=run_loop) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert counter.done == 40 and counter.most == 3
    assert limiter.in_flight == 0


async def test_a_waiter_that_gives_up_leaves_no_slot_taken() -> None:
    limiter, counter = CallLimiter(1), Counter()
    release = asyncio.Event()

    async def hold_until_released() -> None:
        async with limiter.slot():
            await release.wait()

    holder = asyncio.create_task(hold_until_released())
    while limiter.in_flight == 0:  # wait for the holder to have the slot, however long
        await asyncio.sleep(0)
    gave_up = 0
    for _ in range(5):
        try:
            async with asyncio.timeout(0.01):
                await counter.hold(limiter, 0)
        except TimeoutError:
            gave_up += 1
    release.set()
    await holder
    await asyncio.wait_for(counter.hold(limiter, 0), timeout=30)
    # The slot was held throughout: every waiter gave up, and none left a slot taken.
    assert gave_up == 5 and counter.done == 1 and limiter.in_flight == 0
