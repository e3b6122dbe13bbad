"""Seasons and their schedules: created once, each scheduled match's status (DONE is
final), a season's status, and its progress.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from saloon.worker.errors import (
    InvalidSchedule,
    SeasonConflict,
    UnknownMatch,
    UnknownSeason,
)
from saloon.worker.store import schema as t
from saloon.worker.store.connections import (
    _CHUNK,
    StoreBase,
    _as_json,
    _now,
    _utc,
)
from saloon.worker.store.rows import (
    MatchState,
    MatchStatus,
    Progress,
    ScheduledMatch,
    ScheduledMatchRow,
    SeasonRow,
    SeasonStatus,
)

log = logging.getLogger(__name__)

#: A scheduled match in these is still to be played.
_TO_PLAY = (MatchStatus.PENDING, MatchStatus.QUEUED, MatchStatus.RUNNING)


def _settle_statement() -> sa.Update:
    """Store.settle_season's statement, built once (the hot path of every job's end)."""
    se, sm = t.seasons, t.scheduled_matches
    left = (
        sa.select(sm.c.idx)
        .where(sm.c.season_pk == se.c.id)
        .where(sm.c.status.in_([s.value for s in _TO_PLAY]))
        .order_by(sm.c.idx.desc())
        .limit(1)
        .scalar_subquery()
    )
    failed = sa.exists().where(sm.c.season_pk == se.c.id, sm.c.status == MatchStatus.FAILED.value)
    return (
        se.update()
        .where(se.c.season_id == sa.bindparam("b_season"))
        .where(se.c.status.in_([SeasonStatus.CREATED.value, SeasonStatus.RUNNING.value]))
        .where(left.is_(None))
        .values(
            status=sa.case((failed, SeasonStatus.FAILED.value), else_=SeasonStatus.DONE.value),
            updated_at=sa.bindparam("b_at"),
        )
        .returning(se.c.status)
    )


_SETTLE = _settle_statement()


class Seasons(StoreBase):
    """Seasons, their scheduled matches and the matches' statuses."""

    def create_season(
        self, season_id: str, spec: dict[str, Any], matches: Sequence[ScheduledMatch]
    ) -> bool:
        """Store a season and its schedule in one transaction.

        True when created; False when it exists with the same spec (SeasonConflict when the
        spec differs, or when a match id is scheduled by another season).
        """
        if not season_id:
            raise InvalidSchedule("a season needs a non-empty id")
        spec_json = _as_json(spec, f"season {season_id}: spec")
        game = spec_json.get("game") if isinstance(spec_json, dict) else None
        if not isinstance(game, str) or not game:
            raise InvalidSchedule(f"season {season_id}: spec needs a 'game' id")
        rows = self._schedule_rows(season_id, matches)
        now = _now()
        try:
            with self.write("create season") as conn:
                season_pk = conn.execute(
                    self.insert_ignore(t.seasons, ["season_id"])
                    .values(
                        season_id=season_id,
                        game=game,
                        spec=spec_json,
                        status=SeasonStatus.CREATED.value,
                        created_at=now,
                        updated_at=now,
                    )
                    .returning(t.seasons.c.id)
                ).scalar_one_or_none()
                if season_pk is None:
                    stored = conn.execute(
                        sa.select(t.seasons.c.spec).where(t.seasons.c.season_id == season_id)
                    ).scalar_one()
                    if stored != spec_json:
                        raise SeasonConflict(
                            f"season {season_id!r} exists already with a different spec"
                        )
                    return False
                if rows:
                    for row in rows:
                        row.update(season_pk=season_pk, updated_at=now)
                    conn.execute(t.scheduled_matches.insert(), rows)
        except sa.exc.IntegrityError:
            raise SeasonConflict(
                f"season {season_id!r}: a match id of its schedule belongs to another season"
            ) from None
        log.info("store: season %s created with %d matches", season_id, len(rows))
        return True

    @staticmethod
    def _schedule_rows(season_id: str, matches: Sequence[ScheduledMatch]) -> list[dict[str, Any]]:
        ids: set[str] = set()
        indices: set[int] = set()
        rows = []
        for match in matches:
            if not match.match_id:
                raise InvalidSchedule(f"season {season_id}: a match needs a non-empty id")
            if match.match_id in ids:
                raise InvalidSchedule(f"season {season_id}: match id {match.match_id!r} twice")
            if match.index in indices:
                raise InvalidSchedule(f"season {season_id}: schedule index {match.index} twice")
            ids.add(match.match_id)
            indices.add(match.index)
            rows.append(
                {
                    "match_id": match.match_id,
                    "idx": match.index,
                    "spec": _as_json(match.spec, f"match {match.match_id}: spec"),
                    "status": MatchStatus.PENDING.value,
                    "attempts": 0,
                    "detail": "",
                }
            )
        return rows

    def season(self, season_id: str) -> SeasonRow | None:
        """The season ``season_id``, or None."""
        with self.read("season") as conn:
            row = conn.execute(
                sa.select(t.seasons).where(t.seasons.c.season_id == season_id)
            ).one_or_none()
        return None if row is None else _season_row(row)

    def seasons(self, game: str | None = None) -> list[SeasonRow]:
        """Every season (of ``game``), in creation order."""
        query = sa.select(t.seasons).order_by(t.seasons.c.id)
        if game is not None:
            query = query.where(t.seasons.c.game == game)
        with self.read("seasons") as conn:
            return [_season_row(r) for r in conn.execute(query).all()]

    def seasons_on_queue(self, queue: str, status: SeasonStatus) -> list[SeasonRow]:
        """The seasons in ``status`` last started on ``queue``, in creation order."""
        query = (
            sa.select(t.seasons)
            .where(t.seasons.c.queue == queue)
            .where(t.seasons.c.status == SeasonStatus(status).value)
            .order_by(t.seasons.c.id)
        )
        with self.read("seasons on queue") as conn:
            return [_season_row(r) for r in conn.execute(query).all()]

    def set_season_status(
        self,
        season_id: str,
        status: SeasonStatus,
        queue: str | None = None,
        batch: int | None = None,
        batch_tapered: bool | None = None,
    ) -> None:
        """Set a season's status, and the queue it runs on, its matches per job and whether
        its jobs are tapered when given (UnknownSeason if there is no such season)."""
        status = SeasonStatus(status)
        values: dict[str, Any] = {"status": status.value, "updated_at": _now()}
        if queue is not None:
            values["queue"] = queue
        if batch is not None:
            values["batch"] = int(batch)
        if batch_tapered is not None:
            values["batch_tapered"] = bool(batch_tapered)
        update = t.seasons.update().where(t.seasons.c.season_id == season_id).values(**values)
        with self._one_statement("set season status") as conn:
            done = conn.execute(update).rowcount
        if done == 0:
            raise UnknownSeason(f"no season {season_id!r}")

    def settle_season(self, season_id: str) -> SeasonStatus | None:
        """Settle a created or running season with no match left to play (none pending,
        queued or running): DONE, or FAILED when a match failed (``start`` again retries
        those). Its new status, or None when it is left as it is (something left to play,
        settled already, cancelled, or no such season). Idempotent.

        ONE statement, its own transaction, so a season is settled exactly when its last
        match is: whoever records or fails a match (the job that did), and whoever watches
        the queue (the keepers), calls it after its own write is committed, so the last of
        two jobs finishing at once sees the other's result. The match left to play is
        looked for from the schedule's end (jobs run in schedule order: a season's last
        pending matches are at its end), one index probe while any is left."""
        values = {"b_season": season_id, "b_at": _now()}
        with self._one_statement("settle season") as conn:
            status = conn.execute(_SETTLE, values).scalar_one_or_none()
        if status is None:
            return None
        settled = SeasonStatus(status)
        log.info("store: season %s %s", season_id, settled.value)
        return settled

    def scheduled(
        self, season_id: str, statuses: Iterable[MatchStatus] | None = None
    ) -> list[ScheduledMatchRow]:
        """The season's matches in schedule order, with status and attempts (only those in
        ``statuses`` when given)."""
        query = (
            sa.select(t.scheduled_matches, t.seasons.c.season_id)
            .join(t.seasons, t.seasons.c.id == t.scheduled_matches.c.season_pk)
            .where(t.seasons.c.season_id == season_id)
            .order_by(t.scheduled_matches.c.idx)
        )
        if statuses is not None:
            wanted = [MatchStatus(x).value for x in statuses]
            query = query.where(t.scheduled_matches.c.status.in_(wanted))
        with self.read("scheduled") as conn:
            rows = conn.execute(query).all()
            if not rows:
                self._season_pk(conn, season_id)  # UnknownSeason, or a season with none
        return [_scheduled_row(r) for r in rows]

    def match_states(self, season_id: str, statuses: Iterable[MatchStatus]) -> list[MatchState]:
        """The season's matches in ``statuses``, in schedule order, without their specs:
        one light query (none for an unknown season)."""
        m = t.scheduled_matches
        query = (
            sa.select(m.c.match_id, m.c.idx, m.c.status, m.c.detail)
            .join(t.seasons, t.seasons.c.id == m.c.season_pk)
            .where(t.seasons.c.season_id == season_id)
            .where(m.c.status.in_([MatchStatus(x).value for x in statuses]))
            .order_by(m.c.idx)
        )
        with self.read("match states") as conn:
            rows = conn.execute(query).all()
        return [MatchState(r.match_id, r.idx, MatchStatus(r.status), r.detail) for r in rows]

    def scheduled_match(self, match_id: str) -> ScheduledMatchRow | None:
        """One scheduled match by id, or None."""
        query = (
            sa.select(t.scheduled_matches, t.seasons.c.season_id)
            .join(t.seasons, t.seasons.c.id == t.scheduled_matches.c.season_pk)
            .where(t.scheduled_matches.c.match_id == match_id)
        )
        with self.read("scheduled match") as conn:
            row = conn.execute(query).one_or_none()
        return None if row is None else _scheduled_row(row)

    def mark_match(self, match_id: str, status: MatchStatus, detail: str = "") -> None:
        """Set a scheduled match's status; RUNNING counts an attempt; DONE is never undone."""
        self.mark_matches([match_id], status, detail)

    def mark_matches(self, match_ids: Sequence[str], status: MatchStatus, detail: str = "") -> int:
        """Set the status of many scheduled matches in one transaction (enqueueing a season);
        returns how many changed (DONE ones never do). UnknownMatch, and nothing changed,
        if any id is not scheduled."""
        status = MatchStatus(status)
        ids = list(dict.fromkeys(match_ids))
        values: dict[str, Any] = {"status": status.value, "detail": detail, "updated_at": _now()}
        if status is MatchStatus.RUNNING:
            values["attempts"] = t.scheduled_matches.c.attempts + 1
        column = t.scheduled_matches.c.match_id
        changed = 0
        with self.write("mark matches") as conn:
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                found = set(conn.execute(sa.select(column).where(column.in_(chunk))).scalars())
                missing = [m for m in chunk if m not in found]
                if missing:
                    raise UnknownMatch(
                        f"no scheduled match {missing[0]!r}"
                        + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                    )
                # DONE is never undone; CANCELLED only by another CANCELLED (a failed
                # batch marks its matches QUEUED again, never the cancelled ones).
                kept = [MatchStatus.DONE.value]
                if status is not MatchStatus.CANCELLED:
                    kept.append(MatchStatus.CANCELLED.value)
                changed += conn.execute(
                    t.scheduled_matches.update()
                    .where(column.in_(chunk))
                    .where(t.scheduled_matches.c.status.not_in(kept))
                    .values(**values)
                ).rowcount
        return changed

    def progress(self, season_id: str) -> Progress:
        """How many of the season's matches are in each status."""
        with self.read("progress") as conn:
            season_pk = self._season_pk(conn, season_id)
            rows = conn.execute(
                sa.select(t.scheduled_matches.c.status, sa.func.count())
                .where(t.scheduled_matches.c.season_pk == season_pk)
                .group_by(t.scheduled_matches.c.status)
            ).all()
        counts = {MatchStatus(status): int(n) for status, n in rows}
        return Progress(season_id, sum(counts.values()), counts)


def _season_row(row: sa.Row[Any]) -> SeasonRow:
    return SeasonRow(
        season_id=row.season_id,
        game=row.game,
        spec=dict(row.spec),
        status=SeasonStatus(row.status),
        seq=row.id,
        created_at=_utc(row.created_at),
        updated_at=_utc(row.updated_at),
        queue=row.queue,
        batch=row.batch or 1,
        batch_tapered=bool(row.batch_tapered),
    )


def _scheduled_row(row: sa.Row[Any]) -> ScheduledMatchRow:
    return ScheduledMatchRow(
        match_id=row.match_id,
        season_id=row.season_id,
        index=row.idx,
        spec=dict(row.spec),
        status=MatchStatus(row.status),
        attempts=row.attempts,
        detail=row.detail,
        updated_at=_utc(row.updated_at),
    )
