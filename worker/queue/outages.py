"""The platform's own outages as a worker lives through them: the store or Redis away.

An outage of the platform is never a match's failure. A worker that finds the store
unreachable (a job's StoreUnavailable, or its keeper's) puts the job back at the head of
its queue with no retry spent (saloon.worker.queue.rq_internals.PipelinedWorker.puts_back)
and takes no job until the store answers again: it asks it one light question, first
after PROBE_FIRST_S, then twice as long each time, at most PROBE_MAX_S apart, so it
takes jobs again within PROBE_MAX_S of the store's return, and an outage of any length
spends nothing. Redis away: RQ's dequeue loop reconnects at most
rq_internals.REDIS_RECONNECT_MAX_S apart, the keeper every second.

:class:`Outages` logs each outage ONCE when it starts (with its cause) and once when it
is over (how long it lasted, how many jobs went back meanwhile), whatever the number of
jobs, reconnects or keeper rounds in between: a 40 s outage of the store is two lines
per worker, not a traceback per job.
"""

from __future__ import annotations

import logging
import re
import threading
import time

#: The first pause (seconds) before a worker asks an unreachable store again...
PROBE_FIRST_S = 0.5
#: ... each pause twice the last, at most this long: a worker takes jobs again within
#: this long of the store's return.
PROBE_MAX_S = 5.0

_PASSWORD = re.compile(r"(//[^:/@]*):[^@/]*@")


def shown(url: str) -> str:
    """``url`` with any password hidden (it goes to the logs)."""
    return _PASSWORD.sub(r"\1:***@", url)


#: The kinds of service an outage is of.
STORE, REDIS = "the store", "Redis"
#: A service that fails again within this long (seconds) of answering is flapping (say,
#: a database that accepts connections but cannot write): the worker keeps its longest
#: pause between tries, and one line a FLAP_S says it keeps failing, not two a try.
FLAP_S = 60.0


class Outages:
    """The services this worker finds away now, each logged once when it goes and once
    when it is back (thread-safe: the work loop and the keeper thread both report). A
    service is a kind (STORE, REDIS) and its URL."""

    def __init__(self, log: logging.Logger, who: str = "worker") -> None:
        self.log = log
        #: How the lines name this worker (the RQ worker's name once it has one).
        self.who = who
        self._lock = threading.Lock()
        #: (kind, url) -> [monotonic time it went away, jobs put back since, flapping?]
        self._away: dict[tuple[str, str], list[float]] = {}
        #: (kind, url) -> when it last answered again, and how often it failed again since
        #: within FLAP_S of answering (and when that was last said)
        self._back_at: dict[tuple[str, str], float] = {}
        self._flaps: dict[tuple[str, str], int] = {}
        self._flap_said: dict[tuple[str, str], float] = {}

    def away(self, kind: str, url: str, cause: object, *, put_back: int = 0) -> bool:
        """The ``kind`` service at ``url`` cannot be reached, for ``cause``; ``put_back``
        jobs went back to the queue because of it. Logs only when the outage is new and
        the service was not answering a moment ago (at most once a FLAP_S while it
        flaps); True when it logged."""
        key, now = (kind, url), time.monotonic()
        with self._lock:
            known = self._away.get(key)
            if known is not None:
                known[1] += put_back
                return False
            back_at = self._back_at.get(key)
            flapping = back_at is not None and now - back_at < FLAP_S
            self._away[key] = [now, put_back, float(flapping)]
            if flapping:
                flaps = self._flaps[key] = self._flaps.get(key, 0) + 1
                if now - self._flap_said.get(key, -FLAP_S) < FLAP_S:
                    return False
                self._flap_said[key] = now
            else:
                self._flaps.pop(key, None)
        if flapping:
            self.log.warning(
                "%s: %s %s keeps failing (%d times within %.0f s of answering; last: %s); "
                "trying again at most every few seconds",
                self.who,
                kind,
                shown(url),
                flaps,
                FLAP_S,
                cause,
            )
            return True
        doing = "taking no jobs until it answers" if kind == STORE else "retrying in a few s"
        self.log.warning(
            "%s: %s %s is unreachable (%s); %s", self.who, kind, shown(url), cause, doing
        )
        return True

    def back(self, kind: str, url: str) -> bool:
        """The ``kind`` service at ``url`` answered: logs the end of its outage if there
        was one (not after each try of a flapping service); True when it logged."""
        key, now = (kind, url), time.monotonic()
        with self._lock:
            known = self._away.pop(key, None)
            if known is None:
                return False
            self._back_at[key] = now
        went, put_back, flapping = known
        if flapping:
            return False
        more = f"; {int(put_back)} job(s) went back to the queue meanwhile" if put_back else ""
        self.log.warning(
            "%s: %s %s answers again after %.1f s%s", self.who, kind, shown(url), now - went, more
        )
        return True

    def flapping(self, kind: str, url: str) -> bool:
        """True when the ``kind`` service at ``url`` failed again within FLAP_S of its
        last return (keep the pauses long)."""
        with self._lock:
            back_at = self._back_at.get((kind, url))
        return back_at is not None and time.monotonic() - back_at < FLAP_S

    def is_away(self, kind: str, url: str) -> bool:
        """True while the ``kind`` service at ``url`` is known to be away."""
        with self._lock:
            return (kind, url) in self._away

    def urls_away(self, kind: str) -> list[str]:
        """The URLs of the services of ``kind`` away now."""
        with self._lock:
            return [url for k, url in self._away if k == kind]
