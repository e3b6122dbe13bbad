"""The HTML pages: each renders a view of :mod:`saloon.arena.web.views` with a template.

Endpoints are plain functions: Starlette runs them on its bounded worker threads, where
reading the store may block.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from saloon.arena.registry import token_fingerprint
from saloon.arena.web.app import context
from saloon.arena.web.errors import Forbidden, NotFound, SignInRequired, TooManyAttempts
from saloon.arena.web.matchview import load_record
from saloon.arena.web.owners import seat_owner_check, signed_in_user
from saloon.arena.web.sessions import COOKIE, SESSION_S, same_origin, sign_in_allowed
from saloon.arena.web.views import bot_href, season_summary, shown_name
from saloon.ratings.fold import HistoryPoint
from saloon.ratings.htmlpage import board_sections, rating_chart
from saloon.sdk.botref import STORED, parse_entry
from saloon.worker.errors import BadToken

#: Seconds a browser may reuse a page before asking again (boards change with results).
PAGE_CACHE = "no-cache"


def render(request: Request, template: str, status: int = 200, **values: Any) -> Response:
    """``template`` rendered with ``values`` and who is signed in."""
    ctx = context(request)
    user = signed_in_user(request)
    html = ctx.templates.get_template(template).render(user=user, path=request.url.path, **values)
    return _page(html, status)


def _page(html: str, status: int = 200) -> Response:
    return Response(html, status, media_type="text/html", headers={"Cache-Control": PAGE_CACHE})


def kept(request: Request, key: tuple[Any, ...], template: str, values: Any) -> Response:
    """A page that depends on the results alone, kept with the boards (while they do not
    change) for readers not signed in; ``values()`` gives the template's values."""
    ctx = context(request)
    if request.cookies.get(COOKIE) and signed_in_user(request) is not None:
        return render(request, template, **values())
    path = request.url.path
    html = ctx.views.pages.get(
        ("page", path, *key),
        lambda: ctx.templates.get_template(template).render(user=None, path=path, **values()),
    )
    return _page(html)


def index(request: Request) -> Response:
    """Each game's ladders with their top bots, live seasons, recent matches."""
    return render(request, "index.html", **context(request).views.index())


def leaderboard(request: Request) -> Response:
    """A ladder's all-time board (today's page) linking every bot, and its newest matches."""
    game = request.path_params["game"]
    options = dict(parse_qsl(request.url.query))
    views = context(request).views

    def values() -> dict[str, Any]:
        board = views.game_board(game, options)
        return {
            "title": board.title,
            # htmlpage escapes every value it writes.
            "board_html": Markup(board_sections(board, bot_href)),
            "game": game,
            "recent_matches": views.ladder_matches(board.ladder),
        }

    return kept(request, ("board", tuple(sorted(options.items()))), "board.html", values)


def season(request: Request) -> Response:
    """A season: live progress, its board, its matches."""
    views = context(request).views
    data = views.season(request.path_params["season_id"])
    board = views.season_board(data["season_id"])
    body = Markup(board_sections(board, bot_href))
    return render(request, "season.html", season=data, board_html=body)


def ladder(request: Request) -> Response:
    """A continuous ladder: whether it runs, the batches it played, its newest batch, its
    board (it changes with every result; reload to follow it)."""
    ladder_id = request.path_params["ladder_id"]
    views = context(request).views
    # Read fresh (one row): a ladder stopped or counting a batch changes no result.
    row = views.continuous_row(ladder_id)

    def values() -> dict[str, Any]:
        board = views.ladder_board(ladder_id)
        data = views.ladder(ladder_id)
        return {
            "title": f"Continuous ladder {ladder_id}",
            "board_html": Markup(board_sections(board, bot_href)),
            "game": board.ladder.game,
            "continuous": data,
            "recent_matches": views.ladder_matches(board.ladder),
        }

    return kept(request, ("ladder", ladder_id, row.active, row.batches), "board.html", values)


def seasons(request: Request) -> Response:
    """Every season, newest first: not started, running, done, failed or cancelled."""
    ctx = context(request)
    rows = [season_summary(s, ctx.store) for s in reversed(ctx.store.seasons())]
    return render(request, "seasons.html", seasons=rows)


def ladders(request: Request) -> Response:
    """Every continuous ladder: running or not, the batches it played."""
    return render(request, "ladders.html", ladders=context(request).views.continuous_ladders())


def bot(request: Request) -> Response:
    """A bot: owner, versions, rating history, matches with faults, head to head."""
    name = request.path_params["name"]

    def values() -> dict[str, Any]:
        data = context(request).views.bot(name)
        return {"bot": data, "charts": [_chart(name, ladder) for ladder in data["ladders"]]}

    return kept(request, ("bot",), "bot.html", values)


def _chart(name: str, ladder: dict[str, Any]) -> Markup | None:
    """The bot's rating over its ladder's comparisons (the board page's chart), or None."""
    points = [
        HistoryPoint(h["step"], h["match_id"], h["season"], h["version"], h["mu"], h["sigma"])
        for h in ladder["history"]
    ]
    if not points:
        return None
    lo = min(p.mu - 3 * p.sigma for p in points)
    hi = max(p.mu + 3 * p.sigma for p in points)
    # htmlpage escapes every value it writes.
    return Markup(rating_chart(name, points, lo, hi, ladder["comparisons"] - 1))


def match(request: Request) -> Response:
    """The replay viewer of a match (its data comes from /api/matches/ID/replay)."""
    ctx = context(request)
    match_id = request.path_params["match_id"]
    row = ctx.store.result(match_id)
    if row is None:
        raise NotFound(f"no recorded match {match_id!r}")
    from saloon.arena.web.views import match_summary

    summary = match_summary(row)
    user = signed_in_user(request)
    # The owner's view exists for a stored bot's seat only (never a house or local seat);
    # signed in, only the seats of one's own bots are offered.
    owned = []
    owners = ctx.views.owners()
    for s, shown in zip(row.seats, summary["seats"], strict=True):
        entry = parse_entry(s.bot)
        owner = owners.get(entry.name) if entry.kind == STORED else None
        if owner is None or (user is not None and owner != user.name):
            continue
        owned.append({"seat": s.seat, "bot": shown["bot"]})
    return render(request, "match.html", match=summary, owner_seats=owned)


def seat(request: Request) -> Response:
    """What one seat saw, and its stderr: for the seat's bot's owner only."""
    ctx = context(request)
    match_id = request.path_params["match_id"]
    number = int(request.path_params["seat"])
    user = signed_in_user(request)
    if user is None:
        raise SignInRequired("sign in as the bot's owner to see a seat's view")
    record = load_record(ctx.store, match_id)
    seat_owner_check(ctx, record, number, user)
    from saloon.arena.web.matchview import seat_replay, seat_stderr

    view = seat_replay(record, number)
    text = ctx.store.stderr(match_id, number)
    printed = seat_stderr(number, text)
    # Each decision's lines beside that decision; the rest (load, start, end) below.
    at: dict[int, list[str]] = {}
    for block in printed["stderr_blocks"]:
        if block["decision"] is not None:
            at.setdefault(block["decision"], []).extend(block["lines"])
    bot = shown_name(record.seats[number].bot)
    return render(request, "seat.html", view=view, seat=number, bot=bot, printed_at=at, **printed)


def signin_form(request: Request) -> Response:
    """The sign-in form (a token field; the token goes in the POST body only)."""
    allowed = sign_in_allowed(request.url.scheme, request.client.host if request.client else None)
    return render(request, "signin.html", allowed=allowed, error="", next=_next(request))


async def signin(request: Request) -> Response:
    """Exchange an API token for a session cookie (HttpOnly, SameSite=Strict, Secure)."""
    ctx = context(request)
    client = request.client.host if request.client else None
    if not sign_in_allowed(request.url.scheme, client):
        raise Forbidden("sign-in works only over HTTPS (or from this machine)")
    _check_origin(request)
    if ctx.sessions.throttled(client or ""):
        raise TooManyAttempts("too many failed sign-ins from this address; wait a minute")
    form = dict(parse_qsl((await request.body()).decode("utf-8", "replace")))
    token = form.get("token", "").strip()
    try:
        user = await run_in_threadpool(ctx.registry.authenticate, token)
    except BadToken:
        ctx.sessions.failed(client or "")
        # On a worker thread: who is signed in (a cookie of another session) reads the store.
        return await run_in_threadpool(
            render, request, "signin.html", 403, allowed=True, error="that token is not valid",
            next=_safe_next(form.get("next", "/")),
        )  # fmt: skip
    response = RedirectResponse(_safe_next(form.get("next", "/")), status_code=303)
    response.set_cookie(
        COOKIE,
        ctx.sessions.open(user, token_fingerprint(token)),
        max_age=SESSION_S,
        path="/",
        secure=True,
        httponly=True,
        samesite="strict",
    )
    return response


def _check_origin(request: Request) -> None:
    """Forbidden when the form was posted from another site."""
    if not same_origin(request.headers.get("origin"), request.url.scheme,
                       request.headers.get("host")):  # fmt: skip
        raise Forbidden("this form is posted from this site only")


async def signout(request: Request) -> Response:
    """End the session and drop its cookie."""
    _check_origin(request)
    context(request).sessions.close(request.cookies.get(COOKIE))
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(COOKIE, path="/", secure=True, httponly=True, samesite="strict")
    return response


def _next(request: Request) -> str:
    return _safe_next(request.query_params.get("next", "/"))


def _safe_next(target: str) -> str:
    """Only a path of this site (no scheme, no host, no ``//``): no open redirect."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def routes() -> list[Route]:
    """The pages' routes."""
    return [
        Route("/", index, methods=["GET"]),
        Route("/leaderboard/{game}", leaderboard, methods=["GET"]),
        Route("/seasons", seasons, methods=["GET"]),
        Route("/season/{season_id}", season, methods=["GET"]),
        Route("/ladders", ladders, methods=["GET"]),
        Route("/ladder/{ladder_id}", ladder, methods=["GET"]),
        Route("/bot/{name}", bot, methods=["GET"]),
        Route("/match/{match_id}", match, methods=["GET"]),
        Route("/match/{match_id}/seat/{seat:int}", seat, methods=["GET"]),
        Route("/signin", signin_form, methods=["GET"]),
        Route("/signin", signin, methods=["POST"]),
        Route("/signout", signout, methods=["POST"]),
    ]
