"""The arena's web side: pages for people and a read-only JSON API for their scripts.

A Starlette app (:mod:`saloon.arena.web.app`) served by uvicorn in a thread of
``saloon serve`` (:mod:`saloon.arena.web.serve`), pages from Jinja2 templates, static
assets packaged beside them (nothing is fetched from the network). The routes, the limits
and the API are documented in docs/arena.md ("The web side").

Adding a page: its data as a method of :class:`saloon.arena.web.views.Views` (so the API
can give the same), a template in ``templates/`` extending ``base.html``, a route in
:func:`saloon.arena.web.pages.routes` (and one in :func:`saloon.arena.web.api.routes`),
a line in docs/arena.md.

Import :class:`saloon.arena.web.serve.WebServer` to run it; this package's ``__init__``
imports nothing, so the ``saloon`` command's parser does not pay for Starlette.
"""
