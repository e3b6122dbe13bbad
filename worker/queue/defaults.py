"""Defaults of the season queue and its workers, importable without RQ or Redis.

``saloon play`` builds every plugged-in command's parser, so what the parsers need lives
here, apart from the modules that import rq, redis and the store.
"""

from __future__ import annotations

#: Default Redis URL of the queue (``$SALOON_REDIS`` overrides it on the command line).
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
#: Environment variable naming the queue's Redis URL.
REDIS_ENV = "SALOON_REDIS"
#: Default RQ queue name of season matches.
DEFAULT_QUEUE = "saloon"
#: Jobs a worker process plays before it re-executes itself as a fresh process.
DEFAULT_MAX_JOBS = 500
