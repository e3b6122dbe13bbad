"""The worker layer: what plays matches at scale, one subpackage per concept.

* :mod:`saloon.worker.store`: the results store (SQL + migrations);
* :mod:`saloon.worker.sandbox`: where bots run (process, Docker), images, packages;
* :mod:`saloon.worker.matches`: a match spec, playing it here, how jobs carry them;
* :mod:`saloon.worker.queue`: RQ jobs, the worker, its keepers;
* :mod:`saloon.worker.seasons`: season specs, schedules, running a season here.

They are layers, each importing only those below it (pyproject.toml's worker contract;
docs/seasons.md, "The worker's layers"): seasons > status > queue > matches > sandbox >
metrics > store > logs > errors. The worker sits on the referee (it plays matches through
the referee's seats) and under the ratings and the arena.
"""
