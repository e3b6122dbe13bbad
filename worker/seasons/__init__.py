"""Seasons: what a season is, how it expands into matches, and running one here.

:mod:`~saloon.worker.seasons.schedule` is the season spec and its deterministic schedules
(round-robins, duplicate deals) of match specs (saloon.worker.matches.spec);
:mod:`~saloon.worker.seasons.run` creates, starts, runs and follows seasons;
:mod:`~saloon.worker.seasons.standings` a season's standings; :mod:`~saloon.worker.seasons.cli`
the ``season``, ``worker`` and ``demo`` commands.
"""
