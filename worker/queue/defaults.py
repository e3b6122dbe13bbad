"""Defaults of the season queue and its workers, and the worker's options, importable
without RQ or Redis.

``saloon play`` builds every command's parser, so what the parsers need lives here, apart
from the modules that import rq, redis and the store.
"""

from __future__ import annotations

import argparse
import os

from saloon.worker.logs import add_log_format_argument
from saloon.worker.store.config import STORE_ENV

#: Default Redis URL of the queue (``$SALOON_REDIS`` overrides it on the command line).
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
#: Environment variable naming the queue's Redis URL.
REDIS_ENV = "SALOON_REDIS"
#: Default RQ queue name of season matches.
DEFAULT_QUEUE = "saloon"
#: Jobs a worker process plays before it re-executes itself as a fresh process.
DEFAULT_MAX_JOBS = 500
#: A worker's garbage collector looks at its youngest objects after this many more
#: allocations than deallocations (Python's default: 700). A match frees nearly all it
#: allocates as it goes (a Seas of Strife match keeps a few dozen objects), but its transient peaks
#: crossed 700 about once every two matches, each time walking what the match held then:
#: ~3% of a house-bot match's CPU, against well under 1% at this setting (a cycle left
#: behind waits for at most this many allocations).
WORKER_GC_THRESHOLD = 50_000


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    """The worker's options (``saloon worker`` and ``python -m saloon.worker.queue.worker``)."""
    parser.add_argument(
        "--redis",
        default=os.environ.get(REDIS_ENV, DEFAULT_REDIS_URL),
        help=f"Redis URL of the queue (default ${REDIS_ENV} or {DEFAULT_REDIS_URL})",
    )
    parser.add_argument(
        "--queue", action="append", help=f"queue name, repeatable (default {DEFAULT_QUEUE})"
    )
    parser.add_argument("--burst", action="store_true", help="stop when the queue is empty")
    parser.add_argument(
        "--store",
        default=os.environ.get(STORE_ENV) or None,
        help=(
            "open this store at start-up, so the first match does not pay for it (each job "
            f"names its own store; default ${STORE_ENV}, or opened at the first job)"
        ),
    )
    parser.add_argument(
        "--max-jobs",
        type=int,
        default=DEFAULT_MAX_JOBS,
        help=f"restart as a fresh process after this many jobs (default {DEFAULT_MAX_JOBS})",
    )
    parser.add_argument(
        "--metrics",
        default="",
        metavar="HOST:PORT",
        help="serve Prometheus metrics on http://HOST:PORT/metrics (default: none)",
    )
    add_log_format_argument(parser)
