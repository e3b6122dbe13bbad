"""``saloon bot show``: one bot's versions, rating history per ladder, recent matches."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from saloon.ratings.errors import UnknownBotError
from saloon.ratings.fold import fold
from saloon.ratings.params import Scope
from saloon.ratings.results import Result
from saloon.ratings.source import load, registry_name

if TYPE_CHECKING:
    from saloon.worker.store.store import Store

#: Characters of a fault's detail shown per line.
FAULT_DETAIL_CHARS = 80


def _plays(result: Result, name: str) -> list[int]:
    """Seats of ``result`` that ``name`` (or one of its #TAG entries) played."""
    return [i for i, s in enumerate(result.seats) if s.bot == name or registry_name(s.bot) == name]


def show_bot(store: Store, name: str, out: TextIO, *, recent: int, history: int) -> None:
    """Write the bot's page: versions, rating history per ladder, recent matches."""
    from rich.table import Table

    from saloon.ratings.terminal import print_rich

    stored = store.bot(name)
    loaded = load(store)
    mine = [r for r in loaded.results if _plays(r, name)]
    if stored is None and not mine:
        raise UnknownBotError(f"no bot {name!r}: not in the store's registry, no recorded match")
    owner = stored.owner if stored is not None else (mine[0].seats[_plays(mine[0], name)[0]].owner)
    print_rich(out, f"[bold]{name}[/bold]  owner {owner or '-'}")

    matches_per_version: dict[str, int] = {}
    for r in mine:
        for i in _plays(r, name):
            played = r.seats[i].version
            matches_per_version[played] = matches_per_version.get(played, 0) + 1
    versions = Table(title="versions", title_justify="left")
    for col in ("#", "version", "created", "seats played"):
        versions.add_column(col, justify="right" if col in ("#", "seats played") else "left")
    listed = store.versions(name) if stored is not None else []
    for row in listed:
        versions.add_row(str(row.seq), row.version, f"{row.created_at:%Y-%m-%d %H:%M}",
                         str(matches_per_version.pop(row.version, 0)))  # fmt: skip
    for seq, (version, n) in enumerate(matches_per_version.items(), len(listed) + 1):
        versions.add_row(str(seq), version, "-", str(n))
    print_rich(out, versions)

    ladders = []
    for r in mine:
        if r.ladder not in ladders:
            ladders.append(r.ladder)
    for ladder in ladders:
        standings = fold(loaded.results, ladder, Scope.ALL_TIME)
        points = standings.history.get(name, [])
        table = Table(
            title=f"rating on {ladder.label} (all-time; last {min(history, len(points))} of "
            f"{len(points)} rated comparisons)",
            title_justify="left",
        )
        for col in ("comparison", "match", "version", "mu-3sigma", "mu", "sigma"):
            table.add_column(col, justify="left" if col in ("match", "version") else "right")
        for p in points[-history:] if history > 0 else []:
            table.add_row(str(p.step), p.match_id, p.version, f"{p.conservative:.2f}",
                          f"{p.mu:.2f}", f"{p.sigma:.2f}")  # fmt: skip
        print_rich(out, table)

    matches = Table(title=f"recent matches (last {min(recent, len(mine))} of {len(mine)})",
                    title_justify="left")  # fmt: skip
    for col in ("match", "ladder", "finished", "outcome", "seat", "place", "score", "faults"):
        matches.add_column(col, justify="right" if col in ("seat", "place", "score") else "left")
    newest = sorted(mine, key=lambda r: loaded.rows[r.match_id].finished_at, reverse=True)
    for r in newest[: max(recent, 0)]:
        stored_row = loaded.rows[r.match_id]
        for i in _plays(r, name):
            seat = r.seats[i]
            faults = ""
            if seat.faults:
                faults = "\n".join(
                    f"{f.kind.value} at {f.index}: {f.detail[:FAULT_DETAIL_CHARS]}"
                    for f in store.faults(r.match_id)
                    if f.seat == i
                )
            if seat.played_out:
                faults = (faults + "\n" if faults else "") + "played out by house:random"
            aborted = r.outcome.value != "completed"
            matches.add_row(
                r.match_id,
                r.ladder.label,
                f"{stored_row.finished_at:%Y-%m-%d %H:%M}",
                r.outcome.value
                + (f" ({stored_row.abort_reason})" if stored_row.abort_reason else ""),
                str(i),
                "-" if aborted else f"{seat.rank + 1}/{len(r.seats)}",
                "-" if aborted else f"{seat.score:g}",
                faults or "-",
            )
    print_rich(out, matches)
