"""The read-only JSON API behind the pages, for people's scripts (docs/arena.md lists it).

Every answer is a JSON object; an error is ``{"error": "...", "status": N}`` with that
HTTP status. Only GET and HEAD; the seat view needs the owner's session cookie. Every
string in an answer has its control and bidi characters escaped
(:func:`saloon.referee.shown.shown_json`); the stored records keep them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from saloon.arena.registry import Registry
from saloon.arena.secrecy import record_published
from saloon.arena.web.app import context
from saloon.arena.web.errors import Forbidden, NotFound, SignInRequired
from saloon.arena.web.matchview import load_record, match_replay, seat_replay, seat_stderr
from saloon.arena.web.owners import seat_owner_check, signed_in_user
from saloon.arena.web.views import board_json, match_summary, season_summary
from saloon.games import game_ids, get_game
from saloon.referee.shown import shown_json


def json_response(value: Any, status: int = 200) -> Response:
    """``value`` as compact JSON (orjson: the replay of a long match is large)."""
    return Response(
        shown_json(orjson.dumps(value)),
        status,
        media_type="application/json",
        headers={"Cache-Control": "no-cache"},
    )


def games(request: Request) -> Response:
    """Every game with its options, and per game its ladders with their top bots."""
    ladders = {g["game"]: g["ladders"] for g in context(request).views.index()["games"]}
    out = []
    for game in game_ids():
        spec = get_game(game)
        out.append(
            {
                "game": game,
                "players": [spec.min_players, spec.max_players],
                "options": {o.name: o.default for o in spec.options},
                "ladders": ladders.get(game, []),
            }
        )
    return json_response({"games": out})


def index(request: Request) -> Response:
    """What the index page shows."""
    return json_response(context(request).views.index())


def leaderboard(request: Request) -> Response:
    """A ladder's all-time board (``?option=value`` picks the ladder) and newest matches."""
    options = dict(parse_qsl(request.url.query))
    return json_response(context(request).views.board(request.path_params["game"], options))


def seasons(request: Request) -> Response:
    """Every season, newest first, with its progress."""
    ctx = context(request)
    return json_response(
        {"seasons": [season_summary(s, ctx.store) for s in reversed(ctx.store.seasons())]}
    )


def season(request: Request) -> Response:
    """A season: spec, progress, board, every scheduled match."""
    return json_response(context(request).views.season(request.path_params["season_id"]))


def season_progress(request: Request) -> Response:
    """A season's status and progress alone (the season page polls it)."""
    return json_response(context(request).views.progress(request.path_params["season_id"]))


def season_board(request: Request) -> Response:
    """A season's board alone."""
    views = context(request).views
    return json_response(board_json(views.season_board(request.path_params["season_id"])))


def ladders(request: Request) -> Response:
    """Every continuous ladder: its state and the batches it played (what /ladders shows)."""
    return json_response({"ladders": context(request).views.continuous_ladders()})


def ladder(request: Request) -> Response:
    """A continuous ladder: state, settings, newest batch's progress, board."""
    return json_response(context(request).views.ladder(request.path_params["ladder_id"]))


def bot(request: Request) -> Response:
    """A bot: owner, versions, rating history per ladder, matches, head to head."""
    return json_response(context(request).views.bot(request.path_params["name"]))


def matches(request: Request) -> Response:
    """The newest recorded matches (``?limit=N``, at most 200)."""
    try:
        limit = max(0, min(200, int(request.query_params.get("limit", "20"))))
    except ValueError:
        limit = 20
    rows = context(request).views.results()[:limit]
    return json_response({"matches": [match_summary(r) for r in rows]})


def match(request: Request) -> Response:
    """One recorded match's summary."""
    match_id = request.path_params["match_id"]
    row = context(request).store.result(match_id)
    if row is None:
        raise NotFound(f"no recorded match {match_id!r}")
    return json_response(match_summary(row))


def record(request: Request) -> Response:
    """A match's full record, seed included, once its season is over (``saloon replay
    --verify`` checks it; docs/seasons.md, "Secret seeds")."""
    ctx = context(request)
    match_id = request.path_params["match_id"]
    raw = ctx.store.match_record(match_id)
    if raw is None:
        raise NotFound(f"no recorded match {match_id!r}")
    if not record_published(Registry(ctx.store), match_id):
        raise Forbidden(f"the record of {match_id} (its seed) is published when its season is over")
    return json_response(raw)


def replay(request: Request) -> Response:
    """The viewer's data: the record replayed (``?hands=all``: with the full deal)."""
    ctx = context(request)
    match_id = request.path_params["match_id"]
    hands = request.query_params.get("hands") == "all"
    data = ctx.views.replays.get(
        ("replay", match_id, hands),
        lambda: shown_json(
            orjson.dumps(match_replay(load_record(ctx.store, match_id), hands=hands))
        ),
    )
    return Response(data, media_type="application/json", headers={"Cache-Control": "no-cache"})


def seat(request: Request) -> Response:
    """What one seat saw, with its stderr: for the bot's owner, signed in, only."""
    ctx = context(request)
    user = signed_in_user(request)
    if user is None:
        raise SignInRequired("sign in as the bot's owner to see a seat's view")
    match_id = request.path_params["match_id"]
    number = int(request.path_params["seat"])
    record = load_record(ctx.store, match_id)
    seat_owner_check(ctx, record, number, user)
    text = ctx.store.stderr(match_id, number)
    return json_response({**seat_replay(record, number), **seat_stderr(number, text)})


def routes() -> list[Route]:
    """The API's routes (all GET)."""
    table = [
        ("/api/games", games),
        ("/api/index", index),
        ("/api/leaderboard/{game}", leaderboard),
        ("/api/seasons", seasons),
        ("/api/seasons/{season_id}", season),
        ("/api/seasons/{season_id}/progress", season_progress),
        ("/api/seasons/{season_id}/board", season_board),
        ("/api/ladders", ladders),
        ("/api/ladders/{ladder_id}", ladder),
        ("/api/bots/{name}", bot),
        ("/api/matches", matches),
        ("/api/matches/{match_id}", match),
        ("/api/matches/{match_id}/record", record),
        ("/api/matches/{match_id}/replay", replay),
        ("/api/matches/{match_id}/seats/{seat:int}", seat),
    ]
    return [Route(path, endpoint, methods=["GET"]) for path, endpoint in table]
