"""The tournaments on the web: ``/tournaments``, ``/tournament/ID`` (phase, a countdown to
the deadline, the field, the finals as they play, the published report with each
adjacent pair's probability and the crosstable) and their JSON and CSV
(``/api/tournaments``, ``/api/tournaments/ID``, ``.../report.json``, ``.../report.csv``,
``.../crosstable.csv``).

Every view reads (saloon.arena.tournament.status): a tournament's phase changes in the
server's driver thread alone, never because a page was read.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from saloon.arena import tournament
from saloon.arena.tournaments import TournamentRow, Tournaments
from saloon.arena.web.api import json_response
from saloon.arena.web.app import context
from saloon.arena.web.errors import NotFound
from saloon.arena.web.pages import render
from saloon.arena.web.views import bot_href
from saloon.referee.shown import shown
from saloon.sdk.botref import STORED, parse_entry

PHASES = ("open", "frozen", "finals", "reporting", "done")


def tournament_href(tournament_id: str) -> str:
    """The page of a tournament."""
    return f"/tournament/{quote(tournament_id, safe='')}"


def _row(request: Request) -> TournamentRow:
    tournament_id = request.path_params["tournament_id"]
    row = Tournaments(context(request).store).find(tournament_id)
    if row is None:
        raise NotFound(f"no tournament {tournament_id!r}")
    return row


def _data(request: Request, row: TournamentRow) -> dict[str, Any]:
    return tournament.status(context(request).registry, row)


def _listed(row: TournamentRow) -> dict[str, Any]:
    return {
        "tournament_id": row.tournament_id,
        "game": row.game,
        "phase": row.phase.value,
        "deadline": row.deadline.isoformat(),
        "organiser": row.organiser,
        "entrants": len(row.field or ()),
        "batches": row.batches,
        "href": tournament_href(row.tournament_id),
    }


def entrant(ref: str) -> dict[str, str]:
    """An entrant as a page shows it: its reference, a short name and its bot's page
    ("" for a house bot)."""
    parsed = parse_entry(ref)
    if parsed.kind == STORED:
        short = parsed.version.partition(":")[2][:8] or parsed.version[:8]
        return {"ref": ref, "name": f"{parsed.name}@{short}", "href": bot_href(parsed.name)}
    return {"ref": ref, "name": ref, "href": ""}


def _crosstable(report: dict[str, Any]) -> dict[str, Any]:
    """The report's crosstable as a grid in the standings' order: rows[i][j] is the
    i-th entrant's score against the j-th, with its interval (None on the diagonal or
    when they never met); the report keeps each pair once, the lower half mirrors it."""
    order = [str(s["entrant"]) for s in report.get("standings", [])]
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for c in report.get("crosstable", []):  # one cell per pair, the higher placed first
        cells[(c["entrant"], c["opponent"])] = c
        cells[(c["opponent"], c["entrant"])] = {
            "games": c["games"], "score": 1 - c["score"], "low": 1 - c["high"],
            "high": 1 - c["low"],
        }  # fmt: skip
    rows = [[cells.get((a, b)) if a != b else None for b in order] for a in order]
    return {"order": [entrant(e) for e in order], "rows": rows}


def page(request: Request) -> Response:
    """A tournament: phase, countdown, field, live finals, the report once done."""
    row = _row(request)
    data = _data(request, row)
    report = data["report"]
    return render(
        request,
        "tournament.html",
        t=data,
        phases=PHASES,
        entrant=entrant,
        grid=_crosstable(report) if report else None,
    )


def listing(request: Request) -> Response:
    """Every tournament, the newest deadline first."""
    rows = [_listed(r) for r in Tournaments(context(request).store).all()]
    return render(request, "tournaments.html", tournaments=rows)


def api_listing(request: Request) -> Response:
    """Every tournament (what /tournaments shows)."""
    return json_response(
        {"tournaments": [_listed(r) for r in Tournaments(context(request).store).all()]}
    )


def api_one(request: Request) -> Response:
    """A tournament now: settings (seed null until it is over), phase, field, finals
    progress, the standing so far and the report once done."""
    return json_response(_data(request, _row(request)))


def api_report(request: Request) -> Response:
    """The published report as JSON (404 before it is published)."""
    row = _row(request)
    if row.report is None:
        raise NotFound(f"tournament {row.tournament_id} has no report yet ({row.phase.value})")
    return json_response(row.report["json"])


def _csv(row: TournamentRow, part: str) -> Response:
    if row.report is None:
        raise NotFound(f"tournament {row.tournament_id} has no report yet ({row.phase.value})")
    name = f"{row.tournament_id}-{part}.csv"
    return Response(
        shown(tournament.report_csv(row, part)),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"',
                 "Cache-Control": "no-cache"},
    )  # fmt: skip


def api_report_csv(request: Request) -> Response:
    """The report's standings as CSV."""
    return _csv(_row(request), "standings")


def api_crosstable_csv(request: Request) -> Response:
    """The report's crosstable as CSV."""
    return _csv(_row(request), "crosstable")


def routes() -> list[Route]:
    """The tournaments' pages and API routes (all GET)."""
    table = [
        ("/tournaments", listing),
        ("/tournament/{tournament_id}", page),
        ("/api/tournaments", api_listing),
        ("/api/tournaments/{tournament_id}", api_one),
        ("/api/tournaments/{tournament_id}/report.json", api_report),
        ("/api/tournaments/{tournament_id}/report.csv", api_report_csv),
        ("/api/tournaments/{tournament_id}/crosstable.csv", api_crosstable_csv),
    ]
    return [Route(path, endpoint, methods=["GET"]) for path, endpoint in table]
