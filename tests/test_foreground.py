"""Background threads give the screen's loop its turn (``bassi.core.foreground``)."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import AsyncIterator, Callable

import pytest

from bassi.core import foreground


@pytest.fixture
async def loop() -> AsyncIterator[asyncio.AbstractEventLoop]:
    running = asyncio.get_running_loop()
    foreground.attach(running)
    yield running
    foreground.detach(running)


def busy(until: threading.Event, seconds: float, done: threading.Event) -> None:
    """A callback that keeps the loop's thread, as a long screen update would, until
    ``until`` is set or ``seconds`` passed."""
    until.wait(seconds)
    done.set()


async def in_background(work: Callable[[], object]) -> None:
    """Run ``work`` on a new thread (each new thread gives way at its first call) and raise
    what it raised."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    await asyncio.to_thread(thread.join, 30)
    assert not thread.is_alive()
    if failed:
        raise failed[0]


async def test_a_background_thread_waits_until_the_loop_has_done_what_was_due(
    loop: asyncio.AbstractEventLoop,
) -> None:
    update_done = threading.Event()
    started = threading.Event()
    seen: list[bool] = []

    def background() -> None:
        loop.call_soon_threadsafe(started.set)
        loop.call_soon_threadsafe(busy, threading.Event(), foreground.MAX_WAIT / 2, update_done)
        started.wait()
        foreground.give_way()
        seen.append(update_done.is_set())

    await in_background(background)
    assert seen == [True]


async def test_a_loop_busy_for_long_holds_background_work_back_only_so_long(
    loop: asyncio.AbstractEventLoop,
) -> None:
    """A loop that is blocked (or busy for seconds) never stops the work behind it."""
    released, unblocked = threading.Event(), threading.Event()
    seen: list[bool] = []
    loop.call_soon(busy, released, 3600, unblocked)  # runs as soon as this test yields

    def background() -> None:
        foreground.give_way()
        seen.append(released.is_set())
        released.set()  # lets the loop go on

    thread = threading.Thread(target=background)
    thread.start()
    await asyncio.sleep(0)  # the loop is stuck in ``busy`` until the thread releases it
    thread.join(30)
    assert unblocked.is_set()
    assert seen == [False]


async def test_the_loop_thread_itself_never_waits_for_its_own_turn(
    loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(foreground, "MAX_WAIT", 3600)
    foreground.give_way()  # would wait an hour for a turn this very callback is holding up


async def test_without_a_loop_to_give_way_to_background_work_goes_straight_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(foreground, "MAX_WAIT", 3600)
    closed = asyncio.new_event_loop()
    closed.close()
    foreground.attach(closed)  # an app that ended without detaching its loop
    try:
        await in_background(foreground.give_way)
    finally:
        foreground.detach(closed)
    await in_background(foreground.give_way)


async def test_while_a_loop_is_attached_threads_hand_over_the_lock_sooner() -> None:
    """The loop's thread gets the interpreter lock back after a shorter switch interval, and
    the process switches as before once the loop is gone."""
    before = sys.getswitchinterval()
    running = asyncio.get_running_loop()
    foreground.attach(running)
    try:
        assert sys.getswitchinterval() == pytest.approx(foreground.SWITCH_INTERVAL)
        assert before > foreground.SWITCH_INTERVAL
    finally:
        foreground.detach(running)
    assert sys.getswitchinterval() == pytest.approx(before)
