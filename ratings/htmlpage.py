"""The leaderboard as one self-contained HTML page: inline CSS, inline SVG, no scripts.

Nothing on the page reaches the network: it reads the same from a file, an e-mail or a
machine without a connection. It holds the leaderboard table, one rating-over-time chart
per rated bot (mu, and the band from mu - 3 sigma to mu + 3 sigma; the dashed line is the
conservative rating the table ranks by) and a head-to-head table.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from itertools import pairwise
from typing import Any, TextIO

from saloon.ratings.fold import HistoryPoint
from saloon.ratings.leaderboard import Leaderboard, _cell

#: Size of one rating chart, in CSS pixels.
CHART_WIDTH, CHART_HEIGHT = 360, 150
_PAD_LEFT, _PAD_RIGHT, _PAD_TOP, _PAD_BOTTOM = 34, 8, 8, 18

#: Column headers that read better with Greek letters on a page than in a terminal.
_HEADERS = {"conservative": "&mu; &minus; 3&sigma;", "mu": "&mu;", "sigma": "&sigma;"}

#: The page's stylesheet (the arena's web side serves it as a file, for its strict CSP).
BOARD_CSS = """
:root { --ink:#1d2330; --muted:#667085; --line:#d0d5dd; --accent:#b54708; --band:#fde8d7;
        --good:#d1fadf; --bad:#fee4e2; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--ink); margin: 2rem auto; max-width: 1100px; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin: 0 0 .2rem; } h2 { font-size: 1.2rem; margin: 2rem 0 .6rem; }
p.meta { color: var(--muted); margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { padding: .35rem .6rem; border-bottom: 1px solid var(--line); text-align: left;
         white-space: nowrap; }
th { font-weight: 600; color: var(--muted); font-size: .85rem; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.unrated td { color: var(--muted); font-style: italic; }
tbody tr:nth-child(1) td.rank { color: var(--accent); font-weight: 700; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(370px, 1fr));
          gap: 1rem; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 8px; padding: .5rem; }
figcaption { font-weight: 600; margin-bottom: .2rem; }
figcaption span { color: var(--muted); font-weight: 400; }
svg text { font-size: 10px; fill: var(--muted); }
td.h2h { text-align: center; font-variant-numeric: tabular-nums; }
td.win { background: var(--good); } td.loss { background: var(--bad); }
td.self { background: #f2f4f7; }
table#head-to-head { table-layout: fixed; }
#head-to-head thead th { text-align: center; vertical-align: bottom; }
/* A name of 40 characters (the longest a bot may have) breaks rather than widen the
   table past the page or run over its neighbours' cells. */
td.bot, td.owner, #head-to-head th, td.h2h { white-space: normal; overflow-wrap: anywhere; }
figcaption { overflow-wrap: anywhere; }
"""


def _scale(lo: float, hi: float, size: float, flip: bool) -> Any:
    span = (hi - lo) or 1.0

    def f(v: float) -> float:
        t = (v - lo) / span
        return round((1 - t if flip else t) * size, 2)

    return f


def rating_chart(
    bot: str, points: list[HistoryPoint], y_lo: float, y_hi: float, last_step: int
) -> str:
    """One bot's rating over the ladder's rated comparisons (0..last_step), inline SVG."""
    w = CHART_WIDTH - _PAD_LEFT - _PAD_RIGHT
    h = CHART_HEIGHT - _PAD_TOP - _PAD_BOTTOM
    last_step = max(last_step, 1)
    sx = _scale(0, last_step, w, False)
    sy = _scale(y_lo, y_hi, h, True)

    def xy(p: HistoryPoint, v: float) -> str:
        return f"{_PAD_LEFT + sx(p.step)},{_PAD_TOP + sy(v)}"

    upper = [xy(p, p.mu + 3 * p.sigma) for p in points]
    lower = [xy(p, p.mu - 3 * p.sigma) for p in reversed(points)]
    mu = " ".join(xy(p, p.mu) for p in points)
    cons = " ".join(xy(p, p.conservative) for p in points)
    ticks = []
    for v in (y_lo, (y_lo + y_hi) / 2, y_hi):
        y = _PAD_TOP + sy(v)
        ticks.append(
            f'<line x1="{_PAD_LEFT}" x2="{_PAD_LEFT + w}" y1="{y}" y2="{y}" stroke="#eaecf0"/>'
            f'<text x="{_PAD_LEFT - 4}" y="{y + 3}" text-anchor="end">{v:.0f}</text>'
        )
    marks = []
    for before, p in pairwise(points):
        if p.version != before.version:  # a new version starts here (its sigma widens)
            x = _PAD_LEFT + sx(p.step)
            marks.append(
                f'<line class="version" x1="{x}" x2="{x}" y1="{_PAD_TOP}" y2="{_PAD_TOP + h}" '
                f'stroke="#667085" stroke-dasharray="2 2"/>'
                f'<text x="{x + 3}" y="{_PAD_TOP + 9}">{escape(p.version)}</text>'
            )
    label = escape(bot, quote=True)
    return (
        f'<svg class="chart" data-bot="{label}" role="img" width="100%" '
        f'viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}"><title>rating of {label}</title>'
        + "".join(ticks)
        + f'<polygon points="{" ".join(upper + lower)}" fill="var(--band)" opacity=".8"/>'
        f'<polyline points="{cons}" fill="none" stroke="#98a2b3" stroke-dasharray="4 3"/>'
        f'<polyline points="{mu}" fill="none" stroke="var(--accent)" stroke-width="2"/>'
        + "".join(marks)
        + f'<text x="{_PAD_LEFT}" y="{CHART_HEIGHT - 4}">comparison 0</text>'
        f'<text x="{_PAD_LEFT + w}" y="{CHART_HEIGHT - 4}" text-anchor="end">{last_step}</text>'
        "</svg>"
    )


#: A bot's page address from its name (the web side links every bot; a file links none).
BotHref = Callable[[str], str]


def _bot(name: str, href: BotHref | None) -> str:
    """The bot's name, escaped, and a link to its page when there is one."""
    if href is None:
        return escape(name)
    return f'<a href="{escape(href(name), quote=True)}">{escape(name)}</a>'


def _table(board: Leaderboard, href: BotHref | None = None) -> str:
    numeric = {"rank", "conservative", "mu", "sigma", "matches", "wins", "avg_placing",
               "avg_points", "faults"}  # fmt: skip
    head = "".join(
        f'<th class="{"num" if f in numeric else ""}">{_HEADERS.get(f, escape(h))}</th>'
        for f, h in board.columns()
    )
    body = []
    for record in board.records():
        cls = "rated" if record["rank"] is not None else "unrated"
        cells = "".join(
            f'<td class="{f}{" num" if f in numeric else ""}">'
            + (_bot(v, href) if f == "bot" else escape(_cell(f, v)))
            + "</td>"
            for f, v in record.items()
        )
        body.append(
            f'<tr class="{cls}" data-bot="{escape(record["bot"], quote=True)}">{cells}</tr>'
        )
    return (
        f'<table id="leaderboard"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _head_to_head(board: Leaderboard, href: BotHref | None = None) -> str:
    bots = [r.bot for r in board.rows if r.matches]
    if len(bots) < 2:
        return "<p>No two bots have met yet.</p>"
    h2h = board.standings.head_to_head
    head = "".join(f"<th>{_bot(b, href)}</th>" for b in bots)
    rows = []
    for a in bots:
        cells = []
        for b in bots:
            if a == b:
                cells.append('<td class="h2h self">·</td>')
                continue
            cell = h2h.get((a, b))
            if cell is None:
                cells.append('<td class="h2h">-</td>')
                continue
            cls = "win" if cell.above > cell.below else "loss" if cell.below > cell.above else ""
            score = f"{cell.above}&ndash;{cell.below}&ndash;{cell.tied}"
            cells.append(f'<td class="h2h {cls}">{score}</td>')
        rows.append(f"<tr><th>{_bot(a, href)}</th>{''.join(cells)}</tr>")
    return (
        '<p class="meta">Row bot against column bot, in the matches both played: placed '
        "higher &ndash; lower &ndash; level.</p>"
        f'<table id="head-to-head"><thead><tr><th></th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _charts(board: Leaderboard, href: BotHref | None = None) -> str:
    history = board.standings.history
    rated = [r for r in board.rows if r.rated and history.get(r.bot)]
    if not rated:
        return "<p>No rated matches yet.</p>"
    values = [
        v for r in rated for p in history[r.bot] for v in (p.mu - 3 * p.sigma, p.mu + 3 * p.sigma)
    ]
    y_lo, y_hi = min(values), max(values)
    last = board.standings.comparisons - 1
    figures = []
    for row in rated:
        points = history[row.bot]
        figures.append(
            f'<figure data-bot="{escape(row.bot, quote=True)}"><figcaption>{row.rank}. '
            f"{_bot(row.bot, href)} <span>mu {points[-1].mu:.2f}, sigma {points[-1].sigma:.2f}"
            f"</span></figcaption>{rating_chart(row.bot, points, y_lo, y_hi, last)}</figure>"
        )
    return (
        '<p class="meta">mu (solid), conservative rating mu - 3 sigma (dashed), '
        "mu ± 3 sigma (band), after each rated comparison of the ladder; a dotted line "
        "marks where a new version of the bot started.</p>"
        f'<div class="charts">{"".join(figures)}</div>'
    )


def board_sections(board: Leaderboard, href: BotHref | None = None) -> str:
    """The page's body below its title: the table, the rating charts, head to head
    (each bot's name a link to ``href(name)`` when given)."""
    s = board.standings
    return (
        f'<p class="meta">{s.matches} matches, {s.comparisons} rated comparisons; ranked by '
        "the conservative rating mu - 3 sigma (TrueSkill).</p>"
        f"{_table(board, href)}"
        f"<h2>Rating over time</h2>{_charts(board, href)}"
        f"<h2>Head to head</h2>{_head_to_head(board, href)}"
    )


def render_html(board: Leaderboard, out: TextIO) -> None:
    """Write the leaderboard as a self-contained HTML page."""
    title = escape(f"Saloon leaderboard: {board.title}")
    out.write(
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{BOARD_CSS}</style></head><body>"
        f"<h1>{escape(board.title)}</h1>{board_sections(board)}</body></html>\n"
    )
