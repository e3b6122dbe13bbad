"""The tournaments' rows: ``tournaments`` and ``tournament_finals`` (the versions each
owner marked as final), kept through the store's public API (docs/store.md).

What a tournament does with them is saloon.arena.tournament's; this module only reads and
writes rows. Every change of phase is a compare-and-set on the phase (and the finals'
batch count), so two drivers can never both make the same step.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import sqlalchemy as sa

from saloon.arena.errors import FieldFrozen, UnknownTournament
from saloon.worker.errors import RegistryError
from saloon.worker.store import schema as t
from saloon.worker.store.store import Store


class Phase(StrEnum):
    """Where a tournament is: open -> frozen -> finals -> reporting -> done (or cancelled)."""

    #: Taking submissions and final marks until the deadline.
    OPEN = "open"
    #: The deadline passed: the field is fixed; its qualifying season plays.
    FROZEN = "frozen"
    #: Finals batches, each chosen from the results so far.
    FINALS = "finals"
    #: The finals stopped; the report is being computed, off the driver's thread.
    REPORTING = "reporting"
    #: The report is stored and published (and the seed).
    DONE = "done"
    CANCELLED = "cancelled"

    @property
    def over(self) -> bool:
        """True for the phases nothing follows."""
        return self in (Phase.DONE, Phase.CANCELLED)


@dataclass(frozen=True)
class TournamentRow:
    """A tournament as stored."""

    tournament_id: str
    organiser: str
    game: str
    spec: dict[str, Any]
    phase: Phase
    deadline: datetime
    frozen_at: datetime | None
    field: tuple[str, ...] | None
    batches: int
    state: dict[str, Any]
    report: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class FinalMark:
    """A version an owner marked as final for a tournament."""

    bot: str
    version: str
    owner: str
    marked_at: datetime


def _utc(when: datetime) -> datetime:
    """An aware UTC time (SQLite hands naive ones back)."""
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _now() -> datetime:
    return datetime.now(UTC)


def _row(r: Any) -> TournamentRow:
    return TournamentRow(
        tournament_id=r.tournament_id,
        organiser=r.organiser,
        game=r.game,
        spec=dict(r.spec),
        phase=Phase(r.phase),
        deadline=_utc(r.deadline),
        frozen_at=None if r.frozen_at is None else _utc(r.frozen_at),
        field=None if r.field is None else tuple(str(x) for x in r.field),
        batches=int(r.batches),
        state=dict(r.state),
        report=None if r.report is None else dict(r.report),
        created_at=_utc(r.created_at),
        updated_at=_utc(r.updated_at),
    )


class Tournaments:
    """The tournament tables of one store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add(
        self, tournament_id: str, organiser: str, game: str, spec: dict[str, Any],
        deadline: datetime,
    ) -> TournamentRow:  # fmt: skip
        """Store a new, open tournament; RegistryError when the id is taken."""
        now = _now()
        with self.store.write("add tournament") as conn:
            written = conn.execute(
                self.store.insert_ignore(t.tournaments, ["tournament_id"])
                .values(
                    tournament_id=tournament_id, organiser=organiser, game=game, spec=spec,
                    phase=Phase.OPEN.value, deadline=deadline, frozen_at=None, field=None,
                    batches=0, state={}, report=None, created_at=now, updated_at=now,
                )
                .returning(t.tournaments.c.tournament_id)
            ).scalar_one_or_none()  # fmt: skip
        if written is None:
            raise RegistryError(f"tournament {tournament_id!r} exists")
        return self.get(tournament_id)

    def find(self, tournament_id: str) -> TournamentRow | None:
        """The tournament ``tournament_id``, or None."""
        with self.store.read("tournament") as conn:
            r = conn.execute(
                sa.select(t.tournaments).where(t.tournaments.c.tournament_id == tournament_id)
            ).one_or_none()
        return None if r is None else _row(r)

    def get(self, tournament_id: str) -> TournamentRow:
        """The tournament ``tournament_id``; UnknownTournament when there is none."""
        row = self.find(tournament_id)
        if row is None:
            raise UnknownTournament(f"no tournament {tournament_id!r}")
        return row

    def all(self, phases: tuple[Phase, ...] = ()) -> list[TournamentRow]:
        """Every tournament (in ``phases``), newest deadline first, then by id."""
        query = sa.select(t.tournaments).order_by(
            t.tournaments.c.deadline.desc(), t.tournaments.c.tournament_id
        )
        if phases:
            query = query.where(t.tournaments.c.phase.in_([p.value for p in phases]))
        with self.store.read("tournaments") as conn:
            return [_row(r) for r in conn.execute(query).all()]

    def advance(
        self,
        tournament_id: str,
        expect: Phase,
        *,
        expect_batches: int | None = None,
        **values: Any,
    ) -> bool:
        """Change a tournament only if it is in phase ``expect`` (and has made exactly
        ``expect_batches`` finals batches): False when another driver got there first.
        ``values``: phase, frozen_at, field, batches, state, report."""
        allowed = {"phase", "frozen_at", "field", "batches", "state", "report"}
        if not set(values) <= allowed:
            raise ValueError(f"cannot set {sorted(set(values) - allowed)}")
        if isinstance(values.get("phase"), Phase):
            values["phase"] = values["phase"].value
        if "field" in values and values["field"] is not None:
            values["field"] = list(values["field"])
        c = t.tournaments.c
        where = (c.tournament_id == tournament_id) & (c.phase == expect.value)
        if expect_batches is not None:
            where = where & (c.batches == expect_batches)
        with self.store.write("change tournament") as conn:
            done = conn.execute(
                t.tournaments.update().where(where).values(**values, updated_at=_now())
            )
        return bool(done.rowcount == 1)

    # -- final marks ----------------------------------------------------------------------

    def marks(self, tournament_id: str, owner: str = "") -> list[FinalMark]:
        """The final marks of a tournament (of ``owner``), oldest first."""
        c = t.tournament_finals.c
        query = (
            sa.select(t.tournament_finals)
            .where(c.tournament_id == tournament_id)
            .order_by(c.marked_at, c.bot, c.version)
        )
        if owner:
            query = query.where(c.owner == owner)
        with self.store.read("final marks") as conn:
            rows = conn.execute(query).all()
        return [FinalMark(r.bot, r.version, r.owner, _utc(r.marked_at)) for r in rows]

    def set_mark(
        self, tournament_id: str, owner: str, bot: str, version: str, limit: int, now: datetime
    ) -> bool:
        """Mark ``bot``@``version`` final for ``owner`` while the tournament is open and
        the owner has fewer than ``limit`` marks (one transaction, the tournament's row
        locked): True when it is marked now, False when it was marked already.
        RegistryError past the limit; FieldFrozen (raised by the caller's check) is
        checked again here against the stored phase."""
        c = t.tournament_finals.c
        with self.store.write("mark final") as conn:
            phase = conn.execute(
                sa.select(t.tournaments.c.phase)
                .where(t.tournaments.c.tournament_id == tournament_id)
                .with_for_update()
            ).scalar_one_or_none()
            if phase is None:
                raise UnknownTournament(f"no tournament {tournament_id!r}")
            if phase != Phase.OPEN.value:
                raise FieldFrozen(f"tournament {tournament_id}: the field is frozen ({phase})")
            mine = conn.execute(
                sa.select(c.bot, c.version).where(
                    (c.tournament_id == tournament_id) & (c.owner == owner)
                )
            ).all()
            if (bot, version) in {(r.bot, r.version) for r in mine}:
                return False
            if len(mine) >= limit:
                shown = ", ".join(f"{r.bot}@{r.version}" for r in mine)
                raise RegistryError(
                    f"tournament {tournament_id}: {owner} has marked {len(mine)} final "
                    f"version(s) already ({shown}); at most {limit} (unmark one first)"
                )
            conn.execute(
                t.tournament_finals.insert().values(
                    tournament_id=tournament_id, bot=bot, version=version, owner=owner,
                    marked_at=now,
                )
            )  # fmt: skip
        return True

    def clear_mark(self, tournament_id: str, owner: str, bot: str, version: str) -> bool:
        """Remove a final mark of ``owner`` (while open): True when there was one."""
        c = t.tournament_finals.c
        with self.store.write("unmark final") as conn:
            phase = conn.execute(
                sa.select(t.tournaments.c.phase)
                .where(t.tournaments.c.tournament_id == tournament_id)
                .with_for_update()
            ).scalar_one_or_none()
            if phase is None:
                raise UnknownTournament(f"no tournament {tournament_id!r}")
            if phase != Phase.OPEN.value:
                raise FieldFrozen(f"tournament {tournament_id}: the field is frozen ({phase})")
            done = conn.execute(
                t.tournament_finals.delete().where(
                    (c.tournament_id == tournament_id) & (c.owner == owner) & (c.bot == bot)
                    & (c.version == version)
                )
            )  # fmt: skip
        return bool(done.rowcount)
