"""The queue: one RQ job per match on Redis, the worker that plays them, and its keepers.

:mod:`~saloon.worker.queue.season_queue` enqueues a season's matches once and keeps the
queue healthy (abandoned jobs, due retries); :mod:`~saloon.worker.queue.jobs` is the job
(play, record once); :mod:`~saloon.worker.queue.worker` the worker process;
:mod:`~saloon.worker.queue.keepers` what its keepers do over the store (lost matches
enqueued again, seasons settled); :mod:`~saloon.worker.queue.outages` the platform's
outages; :mod:`~saloon.worker.queue.collector` the queue's Prometheus collector;
:mod:`~saloon.worker.queue.defaults` its documented defaults;
:mod:`~saloon.worker.queue.rq_internals` every use of RQ beyond its documented API (RQ is
pinned to the release it was written against). Redis only carries work: the store holds
every result.
"""
