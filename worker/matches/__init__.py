"""Matches: one match's work, played on this worker, and how a season's are cut into jobs.

:mod:`~saloon.worker.matches.spec` is the match spec (one job's work) and its ids;
:mod:`~saloon.worker.matches.play` plays one match spec on this worker (its seats in the
sandbox); :mod:`~saloon.worker.matches.batching` how many matches a queue job carries and
where each job starts. The queue's jobs run these; they know nothing of the queue.
"""
