"""The house bots' strength table, docs/strength.md, from the project's own seasons and
ratings (run by hand; not a test):

    python bench/strength.py [--rounds 2] [--vs-greedy 16] [--jobs 2] [--game ID ...]
                             [--out docs/strength.md]

Per game:

1. a season (saloon.worker.seasons, the in-process queue: the same match job as a worker)
   of house:random, house:greedy and house:search-N for every grade, round-robin with
   duplicate deals, ``--rounds`` rounds, two seats (four at Seas of Strife, which needs
   three or more), stored in a temporary SQLite store;
2. its TrueSkill leaderboard (saloon.ratings: the season's board, mu - 3 sigma);
3. each bot against house:greedy in every other seat, ``--vs-greedy`` matches with
   duplicate deals and the seats rotated (saloon.referee.evaluate, what ``saloon eval``
   runs): the win rate with its 95% interval (two seats) or the mean placing, and the
   one-sided p-value against "no better than greedy".

Each game's season and its matches against greedy run in parallel, ``--jobs`` processes
at a time. Every figure is seeded
(house bots decide by their playout budget, not the clock): the same command writes the
same page on any machine, but for the timings in its footer.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SEED = 19
GREEDY = "house:greedy"


def bots(grades: tuple[int, ...]) -> list[str]:
    """The table's bots, weakest expected first."""
    return ["house:random", GREEDY, *(f"house:search-{n}" for n in grades)]


def seats_for(game_id: str) -> int:
    """Two seats where the game allows, else its least."""
    from saloon.games import get_game

    return max(2, get_game(game_id).min_players) if game_id != "seas-of-strife-v1" else 4


def measure(task: tuple[str, str, int, int, tuple[int, ...]]) -> dict[str, Any]:
    """One part of one game's figures, in its own process: ``season`` (the season and its
    leaderboard) or ``eval`` (every bot against greedy)."""
    game_id, part, rounds, vs_greedy, grades = task
    started = time.perf_counter()
    out: dict[str, Any] = {"game": game_id, "part": part, "seats": seats_for(game_id)}
    if part == "season":
        out.update(season_part(game_id, rounds, grades))
    else:
        out["vs_greedy"] = eval_part(game_id, vs_greedy, grades)
    out["seconds"] = time.perf_counter() - started
    return out


def season_part(game_id: str, rounds: int, grades: tuple[int, ...]) -> dict[str, Any]:
    """The season of every bot and its TrueSkill leaderboard, by bot."""
    from saloon.ratings.boards import season_leaderboard
    from saloon.worker.seasons.run import create, run_here
    from saloon.worker.seasons.schedule import SeasonSpec
    from saloon.worker.store.store import Store

    with (
        tempfile.TemporaryDirectory(prefix="saloon-strength-") as tmp,
        Store.open(str(Path(tmp) / "strength.db")) as store,
    ):
        season = SeasonSpec(
            season_id=f"strength-{game_id}",
            game=game_id,
            participants=tuple(bots(grades)),
            seats=seats_for(game_id),
            rounds=rounds,
            seed=SEED,
            duplicate=True,
        )
        create(store, season)
        played = run_here(store, season.season_id)
        board = season_leaderboard(store, season.season_id)
    rows = {
        row.bot: {
            "rank": row.rank,
            "conservative": row.conservative,
            "mu": row.mu,
            "sigma": row.sigma,
            "matches": row.matches,
            "faults": row.faults,
        }
        for row in board.rows
    }
    return {"season_matches": played, "rows": rows}


def eval_part(game_id: str, vs_greedy: int, grades: tuple[int, ...]) -> dict[str, Any]:
    """Every bot but greedy against greedy in the other seats (saloon eval's figures)."""
    from saloon.referee import evaluate

    seats = seats_for(game_id)
    out = {}
    for bot in bots(grades):
        if bot == GREEDY:
            continue
        matches = evaluate.schedule(bot, [GREEDY], seats, vs_greedy, SEED, True)
        outcomes = evaluate.play_all(game_id, matches)
        summary = evaluate.summarize(bot, game_id, [GREEDY], seats, SEED, True, outcomes)
        out[bot] = summary.to_json(with_matches=False)
    return out


def merged(parts: list[dict[str, Any]], grades: tuple[int, ...]) -> list[dict[str, Any]]:
    """One result per game whose two parts are both in, in the shape render() reads."""
    by_game: dict[str, dict[str, dict[str, Any]]] = {}
    for part in parts:
        by_game.setdefault(part["game"], {})[part["part"]] = part
    out = []
    for game_id, both in by_game.items():
        if set(both) != {"season", "eval"}:
            continue
        season, versus = both["season"], both["eval"]
        table = []
        for bot in bots(grades):
            entry = {"bot": bot, **season["rows"][bot]}
            if bot in versus["vs_greedy"]:
                entry["vs_greedy"] = versus["vs_greedy"][bot]
            table.append(entry)
        out.append(
            {
                "game": game_id,
                "seats": season["seats"],
                "season_matches": season["season_matches"],
                "bots": table,
                "total_s": season["seconds"] + versus["seconds"],
            }
        )
    return out


def render(
    results: list[dict[str, Any]],
    rounds: int,
    vs_greedy: int,
    jobs: int,
    missing: list[str] | None = None,
) -> str:
    """The Markdown page (``missing``: games not measured yet, said so on the page)."""
    lines = [
        "<!-- Generated by `python bench/strength.py` from the project's own seasons and "
        "ratings: edit that script, not this page. -->",
        "# How strong are the house bots?",
        "",
        "A ladder to climb: `house:random` < `house:greedy` < `house:search-25` < ... < "
        "`house:search-800` (N playouts per decision of rollouts of greedy's own policy, "
        "docs/bot-guide.md). Per game, two measurements:",
        "",
        f"* **rating**: a season of all eight house bots (round-robin, duplicate deals, "
        f"{rounds} round{'s' if rounds != 1 else ''}, seed {SEED}; the same season a "
        "`saloon season run` plays), rated "
        "by the project's TrueSkill (`saloon leaderboard`): the conservative rating mu - 3 "
        "sigma, and mu +- sigma;",
        f"* **vs greedy**: {vs_greedy} matches of the bot against `house:greedy` in every "
        "other seat, duplicate deals, seats rotated (what `saloon eval BOT --game GAME "
        f"--vs house:greedy -n {vs_greedy} --duplicate --seed {SEED}` runs): the win rate "
        "(a tie counts half) with its 95% Wilson interval at two seats, the mean placing "
        "(1 best) with its 95% interval at more, and the one-sided sign-test p-value "
        "against 'no better than greedy'.",
        "",
        "The house bots decide by their playout budget, never the clock, so these figures "
        "are the same on any machine. Small samples: read the intervals. A season this "
        "short and this few matches against greedy separate random, greedy and search, "
        "not the search grades from one another (their intervals overlap; the costlier "
        "grades take seconds a decision), so the order among search-25 .. search-800 "
        "below is partly noise. More rounds and matches narrow it, at a cost that grows "
        "with the grade. Regenerate with "
        f"`python bench/strength.py --rounds {rounds} --vs-greedy {vs_greedy}`.",
    ]
    for result in results:
        seats = result["seats"]
        lines += ["", f"## `{result['game']}` ({seats} seats)", ""]
        if seats == 2:
            head = "| bot | rank | mu - 3 sigma | mu +- sigma | vs greedy: win rate (95%) | p |"
        else:
            head = (
                "| bot | rank | mu - 3 sigma | mu +- sigma | vs greedy: mean placing of "
                f"{seats} (95%) | p |"
            )
        lines += [head, "|---|---|---|---|---|---|"]
        for entry in result["bots"]:
            rating = (
                f"{entry['conservative']:.1f} | {entry['mu']:.1f} +- {entry['sigma']:.1f}"
                if entry["mu"] is not None
                else "- | -"
            )
            versus = entry.get("vs_greedy")
            if versus is None:
                cell, p = "(the reference)", ""
            elif seats == 2:
                low, high = versus["win_rate_95"]
                cell = (
                    f"{versus['win_rate']:.2f} ({low:.2f}-{high:.2f}; {versus['wins']}-"
                    f"{versus['ties']}-{versus['losses']})"
                )
                p = f"{versus['p_value']:.2g}"
            else:
                low, high = versus["mean_placing_95"]
                cell = (
                    f"{versus['mean_placing']:.2f} ({low:.2f}-{high:.2f}; greedy "
                    f"{versus['opponents_mean_placing']:.2f})"
                )
                p = f"{versus['p_value']:.2g}"
            lines.append(f"| `{entry['bot']}` | {entry['rank']} | {rating} | {cell} | {p} |")
        lines.append("")
        counts = " The counts are wins-ties-losses against greedy." if seats == 2 else ""
        lines.append(f"Season: {result['season_matches']} matches.{counts}")
    for game_id in missing or []:
        lines += ["", f"## `{game_id}`", "", "Not measured in this run (it was stopped first)."]
    lines += [
        "",
        "Generated in "
        + ", ".join(f"{r['game']} {r['total_s'] / 60:.0f} min" for r in results)
        + f" of wall time ({jobs} processes at a time, on a 2-core machine shared with other"
        " work: it is the CPU-seconds of the costlier grades that take the time).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure every game and write the page."""
    from saloon.games import game_ids

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--vs-greedy", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=4, help="processes (each game is two parts)")
    parser.add_argument("--game", action="append")
    parser.add_argument("--out", default=str(ROOT / "docs" / "strength.md"))
    parser.add_argument("--json", help="also write the raw figures to this file")
    parser.add_argument("--grades", help="search grades, comma-separated (default: all)")
    parser.add_argument(
        "--resume", action="store_true", help="keep the games already in --json, play the rest"
    )
    args = parser.parse_args(argv)
    games = args.game or game_ids()
    from saloon.sdk.house.search import GRADES

    grades = tuple(int(g) for g in args.grades.split(",")) if args.grades else GRADES
    parts: list[dict[str, Any]] = []
    if args.json and Path(args.json).exists() and args.resume:
        parts = [p for p in json.loads(Path(args.json).read_text()) if p["game"] in games]
    have = {(p["game"], p["part"]) for p in parts}
    # The dearest first (Western's playouts run to the end of the game, Seizure's are
    # long), so the last process to finish is not one that started late.
    order = sorted(
        games,
        key=lambda g: (
            ["western-showdown-v1", "seizure-v1"].index(g)
            if g in ("western-showdown-v1", "seizure-v1")
            else 2
        ),
    )
    work = [
        (g, part, args.rounds, args.vs_greedy, grades)
        for g in order
        for part in ("season", "eval")
        if (g, part) not in have
    ]
    context = multiprocessing.get_context("spawn")
    with context.Pool(max(1, min(args.jobs, len(work)))) as pool:
        # Each part is written as soon as it is in: a long run that is stopped keeps what
        # it finished (--resume goes on from there).
        for part in pool.imap_unordered(measure, work):
            parts.append(part)
            results = sorted(merged(parts, grades), key=lambda r: games.index(r["game"]))
            missing = [g for g in games if g not in {r["game"] for r in results}]
            page = render(results, args.rounds, args.vs_greedy, args.jobs, missing)
            Path(args.out).write_text(page)
            if args.json:
                Path(args.json).write_text(json.dumps(parts, indent=1))
            print(f"{part['game']} {part['part']}: {part['seconds']:.0f} s", file=sys.stderr)
    results = sorted(merged(parts, grades), key=lambda r: games.index(r["game"]))
    missing = [g for g in games if g not in {r["game"] for r in results}]
    Path(args.out).write_text(render(results, args.rounds, args.vs_greedy, args.jobs, missing))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
