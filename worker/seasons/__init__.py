"""Seasons: what a season is, how it expands into matches, and running one here.

:mod:`~saloon.worker.seasons.spec` is the match spec (one job's work) and its ids;
:mod:`~saloon.worker.seasons.schedule` the season spec and its deterministic schedules
(round-robins, duplicate deals); :mod:`~saloon.worker.seasons.play` plays one match spec on
this worker; :mod:`~saloon.worker.seasons.run` creates, starts, runs and follows seasons;
:mod:`~saloon.worker.seasons.standings` a season's standings; :mod:`~saloon.worker.seasons.cli`
the ``season``, ``worker`` and ``demo`` commands.
"""
