"""The Starlette app: pages (:mod:`saloon.arena.web.pages`), the JSON API
(:mod:`saloon.arena.web.api`), the packaged static files, error pages.

Every response carries the strict security headers of :mod:`saloon.arena.web.guard`; an
error is answered with its status and one line (HTML for a page, JSON under ``/api/``),
never a traceback; the store's threads are bounded by ``WebLimits.store_threads``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import anyio.to_thread
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from saloon.arena.boards import BoardCache
from saloon.arena.metrics import RequestMetrics, metrics_endpoint
from saloon.arena.registry import Registry
from saloon.arena.web.errors import WebError
from saloon.arena.web.guard import BodyRefused, Guard, refused
from saloon.arena.web.limits import WebLimits
from saloon.arena.web.sessions import Sessions
from saloon.arena.web.views import Views
from saloon.games.errors import GameError
from saloon.ratings.errors import RatingsError
from saloon.ratings.htmlpage import BOARD_CSS
from saloon.referee.errors import RefereeError
from saloon.referee.shown import shown
from saloon.worker.errors import StoreUnavailable
from saloon.worker.store.store import Store

log = logging.getLogger(__name__)


@dataclass
class WebContext:
    """What every route reads: the store, its views, the registry, the sessions."""

    store: Store
    registry: Registry
    views: Views
    sessions: Sessions
    templates: Environment
    limits: WebLimits


def _shown_value(value: Any) -> Any:
    """Every value a template prints, with control and bidi characters made visible
    (:func:`saloon.referee.shown.shown`: a bot's U+202E must not reverse a page's text)."""
    if not isinstance(value, str):
        return value
    text = shown(value)
    if text is value:
        return value
    return Markup(text) if isinstance(value, Markup) else text


def templates() -> Environment:
    """The packaged Jinja2 templates, autoescaped, every printed value :func:`shown`."""
    env = Environment(
        loader=PackageLoader("saloon.arena.web", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown_value,
    )
    return env


def context(request: Request) -> WebContext:
    """The app's :class:`WebContext`."""
    ctx: WebContext = request.app.state.ctx
    return ctx


def status_of(exc: BaseException) -> tuple[int, str]:
    """The HTTP status and the one line an error is answered with."""
    if isinstance(exc, WebError):
        return exc.status, str(exc)
    if isinstance(exc, RatingsError | GameError | RefereeError):
        return 404, str(exc)
    if isinstance(exc, StoreUnavailable):
        return 503, "the results store is unavailable; try again shortly"
    if isinstance(exc, HTTPException):
        return exc.status_code, str(exc.detail)
    return 500, "internal error"


async def on_error(request: Request, exc: Exception) -> Response:
    """An error page (or JSON under /api/), never a traceback."""
    status, message = status_of(exc)
    message = shown(message)  # it may quote the request's path
    headers: dict[str, str] | None = None
    if status == 500:
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    elif status == 405:
        headers = {"Allow": "GET, HEAD"}
    elif isinstance(exc, BodyRefused):
        refused(request.scope, exc)  # one line; the rest of the body is never read
        headers = {"Connection": "close"}
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message, "status": status}, status, headers=headers)
    try:
        page = context(request).templates.get_template("error.html")
        html = page.render(status=status, message=message, **error_links(request))
    except Exception:  # the error page itself must not fail
        return PlainTextResponse(f"{message}\n", status, headers=headers)
    return Response(html, status, headers=headers, media_type="text/html")


def error_links(request: Request) -> dict[str, Any]:
    """What an error page offers besides the site's header: who is signed in, the page the
    reader came from (a path of this site, from ``Referer``) and the match of a seat."""
    from saloon.arena.web.owners import signed_in_user

    path = request.url.path
    referer = urlsplit(request.headers.get("referer", ""))
    back = referer.path + (f"?{referer.query}" if referer.query else "")
    if not back.startswith("/") or back.startswith("//") or "\\" in back or back == path:
        back = ""
    match = re.match(r"^/match/([^/]+)/seat/", path)
    try:
        user = signed_in_user(request)
    except Exception:  # no session store (an app in the middle of starting): signed out
        user = None
    return {
        "user": user,
        "path": path,
        "back": back,
        "match_href": f"/match/{quote(match.group(1), safe='')}" if match else "",
    }


async def healthz(request: Request) -> Response:
    """``ok`` (for a load balancer)."""
    return PlainTextResponse("ok\n")


async def board_css(request: Request) -> Response:
    """The board page's stylesheet (the one ``saloon leaderboard --format html`` inlines)."""
    return Response(BOARD_CSS, media_type="text/css")


def build_app(
    store: Store, boards: BoardCache | None = None, limits: WebLimits | None = None
) -> Any:
    """The web side of ``store`` as an ASGI app (the routes in docs/arena.md)."""
    from saloon.arena.web import api, pages, tournaments

    limits = limits or WebLimits()
    registry = Registry(store)
    boards = boards or BoardCache(registry)
    sessions = Sessions(registry.fingerprint)
    ctx = WebContext(store, registry, Views(store, boards), sessions, templates(), limits)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # The store is read on worker threads: at most this many at once.
        anyio.to_thread.current_default_thread_limiter().total_tokens = limits.store_threads
        yield

    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
        Route("/static/board.css", board_css, methods=["GET"]),
        Mount("/static", StaticFiles(packages=[("saloon.arena.web", "static")]), name="static"),
        *pages.routes(),
        *api.routes(),
        *tournaments.routes(),
    ]
    app = Starlette(
        routes=routes,
        # Known errors are answered here; anything else is a 500 (logged once).
        exception_handlers={
            cls: on_error
            for cls in (
                HTTPException,
                WebError,
                RatingsError,
                GameError,
                RefereeError,
                StoreUnavailable,
                Exception,
            )
        },
        lifespan=lifespan,
        # Inside the error handling: a request is counted with the status it is answered.
        middleware=[Middleware(RequestMetrics)],
    )
    app.state.ctx = ctx
    return Guard(app, limits)
