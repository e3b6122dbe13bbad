"""Sandboxes: where a bot runs, and what it is run from.

:mod:`~saloon.worker.sandbox.base` is the one interface and the process sandbox (for
laptops, not a security boundary); :mod:`~saloon.worker.sandbox.docker` and
:mod:`~saloon.worker.sandbox.docker_seat` the production sandbox (a locked-down container
per bot runtime, kept warm); :mod:`~saloon.worker.sandbox.images` the bot images;
:mod:`~saloon.worker.sandbox.packages` the bot package format and its checks;
:mod:`~saloon.worker.sandbox.stored` stored bot versions, unpacked where they are seated.
"""
