"""Reading results: recorded matches in schedule order (never completion order), their
faults, records and stderr, and a game's latest match times.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from saloon.referee.faults import FaultKind
from saloon.referee.record import Outcome
from saloon.worker.store import schema as t
from saloon.worker.store.codec import decode_record
from saloon.worker.store.connections import (
    StoreBase,
    _utc,
)
from saloon.worker.store.rows import (
    FaultRow,
    ResultRow,
    SeatRow,
)


class Results(StoreBase):
    """Recorded results, read back."""

    def recent_match_ms(self, game: str, limit: int = 16) -> list[float]:
        """The match times (``timing.match_ms`` of the records) of the game's ``limit``
        latest recorded matches, newest first (what a season's batch size is measured on):
        the results' own column, or, for results recorded before it was kept there, read
        from their records."""
        r, mr = t.results, t.match_records
        latest = sa.select(r.c.match_id, r.c.match_ms).where(r.c.game == game)
        latest = latest.order_by(r.c.finished_at.desc()).limit(limit)
        with self.read("recent match times") as conn:
            rows = conn.execute(latest).all()
            older = [m for m, ms in rows if ms is None]
            blobs = (
                dict(
                    (m, (encoding, data))
                    for m, encoding, data in conn.execute(
                        sa.select(mr.c.match_id, mr.c.encoding, mr.c.data).where(
                            mr.c.match_id.in_(older)
                        )
                    ).all()
                )
                if older
                else {}
            )
        out = []
        for match_id, ms in rows:
            if ms is None and match_id in blobs:
                loaded = decode_record(*blobs[match_id])
                timing = (loaded.get("timing") if isinstance(loaded, dict) else None) or {}
                if isinstance(timing, dict) and isinstance(timing.get("match_ms"), int | float):
                    ms = float(timing["match_ms"])
            if ms is not None:
                out.append(float(ms))
        return out

    def _results_query(self, where: sa.ColumnElement[bool] | None) -> sa.Select[Any]:
        joined = t.results.outerjoin(
            t.scheduled_matches, t.scheduled_matches.c.match_id == t.results.c.match_id
        ).outerjoin(t.seasons, t.seasons.c.id == t.scheduled_matches.c.season_pk)
        query = sa.select(t.results, t.seasons.c.season_id, t.scheduled_matches.c.idx).select_from(
            joined
        )
        return query if where is None else query.where(where)

    def _fetch_results(
        self, conn: sa.Connection, where: sa.ColumnElement[bool] | None
    ) -> list[ResultRow]:
        query = self._results_query(where).order_by(
            # Schedule order: seasons by creation, then index; matches outside any season
            # after them, by id. Never completion order.
            sa.case((t.seasons.c.id.is_(None), 1), else_=0),
            t.seasons.c.id,
            t.scheduled_matches.c.idx,
            self._bytewise(t.results.c.match_id),
        )
        rows = conn.execute(query).all()
        if not rows:
            return []
        ids = self._results_query(where).with_only_columns(t.results.c.match_id)
        seats: dict[str, list[SeatRow]] = {}
        c = t.result_seats.c
        # Plain tuples, fetched at once: a ratings fold reads every result of a game.
        for match_id, seat, bot, version, score, rank, played_out, faults in conn.execute(
            sa.select(c.match_id, c.seat, c.bot, c.version, c.score, c.rank, c.played_out, c.faults)
            .where(c.match_id.in_(ids.scalar_subquery()))
            .order_by(c.match_id, c.seat)
        ).all():
            seats.setdefault(match_id, []).append(
                SeatRow(seat, bot, version, score, rank, bool(played_out), faults)
            )
        return [
            ResultRow(
                match_id=r.match_id,
                season_id=r.season_id,
                index=r.idx,
                game=r.game,
                options=dict(r.options),
                seed=int(r.seed),
                outcome=Outcome(r.outcome),
                abort_reason=r.abort_reason,
                seats=tuple(seats.get(r.match_id, ())),
                saloon_version=r.saloon_version,
                finished_at=_utc(r.finished_at),
            )
            for r in rows
        ]

    def result(self, match_id: str) -> ResultRow | None:
        """The recorded result of ``match_id``, or None."""
        with self.read("result") as conn:
            found = self._fetch_results(conn, t.results.c.match_id == match_id)
        return found[0] if found else None

    def results(self, *, game: str | None = None, season_id: str | None = None) -> list[ResultRow]:
        """Recorded results in SCHEDULE order (season creation order, then schedule index;
        matches outside seasons last, by id), never completion order."""
        conditions: list[sa.ColumnElement[bool]] = []
        if game is not None:
            conditions.append(t.results.c.game == game)
        if season_id is not None:
            conditions.append(t.seasons.c.season_id == season_id)
        with self.read("results") as conn:
            if season_id is not None:
                self._season_pk(conn, season_id)
            return self._fetch_results(conn, sa.and_(*conditions) if conditions else None)

    def faults(self, match_id: str) -> list[FaultRow]:
        """The faults of a recorded match, in the order they happened."""
        with self.read("faults") as conn:
            rows = conn.execute(
                sa.select(t.faults).where(t.faults.c.match_id == match_id).order_by(t.faults.c.id)
            ).all()
        return [FaultRow(r.match_id, r.seat, FaultKind(r.kind), r.decision, r.detail) for r in rows]

    def match_record(self, match_id: str) -> dict[str, Any] | None:
        """The full match record as it was recorded (decompressed), or None."""
        with self.read("match record") as conn:
            row = conn.execute(
                sa.select(t.match_records).where(t.match_records.c.match_id == match_id)
            ).one_or_none()
        if row is None:
            return None
        loaded: dict[str, Any] = decode_record(row.encoding, row.data, f"match {match_id}")
        return loaded

    def stderr(self, match_id: str, seat: int) -> str:
        """What seat ``seat`` wrote to stderr in the match (capped); "" if nothing."""
        with self.read("stderr") as conn:
            row = conn.execute(
                sa.select(t.seat_stderr).where(
                    (t.seat_stderr.c.match_id == match_id) & (t.seat_stderr.c.seat == seat)
                )
            ).one_or_none()
        if row is None:
            return ""
        if row.dropped_bytes:
            return f"{row.text}\n[... {row.dropped_bytes} more bytes of stderr dropped]\n"
        return str(row.text)
