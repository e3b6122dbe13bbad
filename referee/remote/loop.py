"""The referee's gRPC event loops: one per thread, run only inside a seat's own calls.

A seat starts no thread. Its stream runs on ``grpc.aio`` on an event loop of the calling
thread (:func:`thread_loop`), run only inside the seat's calls (``run_until_complete``, or
``run_forever`` stopped by the stream's reader or a deadline timer): no hand-off to another
thread, which costs hundreds of microseconds on a busy machine.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)

_local = threading.local()


def thread_loop() -> asyncio.AbstractEventLoop:
    """This thread's gRPC event loop: made on first use, kept for the thread's life.

    One loop per thread for good: grpc.aio mishandles a second loop in a thread. A process
    forked from one with a loop makes a loop of its own.
    """
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or getattr(_local, "pid", None) != os.getpid():
        loop = asyncio.new_event_loop()
        _local.loop = loop
        _local.pid = os.getpid()
    return loop


def start_eagerly(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, None]
) -> asyncio.Future[None]:
    """Run ``coro`` now, outside the (stopped) loop, up to its first wait; the loop then
    resumes it whenever what it waits on is done. A future that is done when it is.

    What a task does, less its first step's run of the loop: a write on a stream whose
    call is open is handed to gRPC here and now (an eager task; Python 3.11 has none).
    Only for coroutines whose first step needs no running loop: a grpc.aio write on a
    call whose metadata is sent (it waits on futures of the call's own loop). Whatever
    ``coro`` raises is logged (at debug level) and ends it: the writes catch their own.
    """
    done: asyncio.Future[None] = loop.create_future()

    def step(_: object = None) -> None:
        try:
            awaited = coro.send(None)
        except StopIteration:
            pass
        except BaseException as exc:  # what a task would keep: the writes catch their own
            log.debug("a write ended with %r", exc)
        else:
            if asyncio.isfuture(awaited):
                awaited.add_done_callback(step)
            else:  # a bare yield
                loop.call_soon(step)
            return
        if not done.done():
            done.set_result(None)

    step()
    return done
