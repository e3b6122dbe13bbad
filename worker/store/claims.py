"""Claims: a scheduled match marked RUNNING (an attempt) before it is played, unless it
is DONE or CANCELLED; one match, or a batch's in one round trip, sent without waiting
where the store can (PostgreSQL). A claim is advisory: the result is what counts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import orjson
import sqlalchemy as sa

from saloon.worker.errors import (
    StoreUnavailable,
)
from saloon.worker.store import schema as t
from saloon.worker.store.config import DEFAULT_STORE_CONFIG, StoreConfig
from saloon.worker.store.connections import (
    _CHUNK,
    StoreBase,
    _ConnectionLost,
    _Flight,
    _now,
)
from saloon.worker.store.rows import (
    MatchStatus,
)

log = logging.getLogger(__name__)


#: PostgreSQL: claim a batch's matches (Store.claim_matches, send_claim) in ONE round trip
#: (sent through libpq as _RECORD_MANY_PG is: $1 the ids as a JSON array, $2 the worker,
#: $3 the time; @STATUS stands for MatchStatus.STATUS's value), autocommit:
#: each scheduled id RUNNING (an attempt) unless DONE or CANCELLED, and every scheduled
#: id's status afterwards (the outer SELECT sees the rows as before the UPDATE, so a
#: claimed one is reported RUNNING from the CTE). The claim is advisory (the result is
#: what counts): set_config(..., true) makes this statement's commit skip the WAL flush.
_CLAIM_MANY_PG = b"""
WITH ids AS (SELECT json_array_elements_text(CAST($1 AS JSON)) AS match_id),
c AS (
    UPDATE scheduled_matches
    SET status = '@RUNNING', detail = $2, attempts = attempts + 1,
        updated_at = CAST($3 AS TIMESTAMPTZ)
    WHERE match_id IN (SELECT match_id FROM ids) AND status NOT IN ('@DONE', '@CANCELLED')
      AND set_config('synchronous_commit', 'off', true) IS NOT NULL
    RETURNING match_id
)
SELECT m.match_id, CASE WHEN c.match_id IS NULL THEN m.status ELSE '@RUNNING' END
FROM scheduled_matches AS m LEFT JOIN c ON c.match_id = m.match_id
WHERE m.match_id IN (SELECT match_id FROM ids)
"""


for _status in (MatchStatus.RUNNING, MatchStatus.DONE, MatchStatus.CANCELLED):
    _CLAIM_MANY_PG = _CLAIM_MANY_PG.replace(f"@{_status.name}".encode(), _status.value.encode())


_CLAIM_MANY_NAME = "saloon_claim_many_1"


class PendingClaim:
    """A batch's claim on its way to the store (Store.send_claim); :meth:`wait` for it."""

    def __init__(
        self,
        statuses: dict[str, MatchStatus] | None,
        collect: Callable[[], dict[str, MatchStatus]] | None = None,
    ) -> None:
        self._statuses = statuses
        self._collect = collect

    @property
    def done(self) -> bool:
        """True once :meth:`wait` returned or raised (the claim's connection is free)."""
        return self._collect is None

    def wait(self) -> dict[str, MatchStatus]:
        """Each scheduled id's status after the claim (RUNNING: claimed); ids not scheduled
        are absent. StoreUnavailable when the database could not be reached (the claim is
        then over: a caller retries the job)."""
        if self._statuses is None:
            if self._collect is None:
                raise StoreUnavailable("claim matches: its answer was lost")
            collect, self._collect = self._collect, None
            self._statuses = collect()
        return self._statuses


class Claims(StoreBase):
    """Claims of scheduled matches."""

    def __init__(self, engine: sa.Engine, config: StoreConfig = DEFAULT_STORE_CONFIG) -> None:
        super().__init__(engine, config)
        self._claim = self._claim_statement()
        # SQLite's claim of a batch (PostgreSQL's is _CLAIM_MANY_PG): built once, the id
        # list bound at execution (an expanding IN), so a call compiles nothing.
        self._claim_many = self._claim_statement(many=True)
        matches = t.scheduled_matches
        self._statuses = sa.select(matches.c.match_id, matches.c.status).where(
            matches.c.match_id.in_(sa.bindparam("b_ids", expanding=True))
        )

    def _claim_statement(self, many: bool = False) -> Any:
        """UPDATE a scheduled match (``b_match_id``; RETURNING its status) or, ``many``,
        several (``b_ids``, an expanding IN; RETURNING the ids claimed) to RUNNING (an
        attempt) unless DONE or CANCELLED."""
        matches = t.scheduled_matches
        left_alone = (MatchStatus.DONE.value, MatchStatus.CANCELLED.value)
        key = (
            matches.c.match_id.in_(sa.bindparam("b_ids", expanding=True))
            if many
            else matches.c.match_id == sa.bindparam("b_match_id")
        )
        where = key & matches.c.status.not_in(left_alone)
        if self._postgres and not many:  # PostgreSQL's batch claim is _CLAIM_MANY_PG
            # The claim is advisory (the result is what counts): its commit need not wait
            # for the WAL flush. set_config(..., true) lasts until this statement's own
            # (implicit) transaction commits, and PostgreSQL reads the setting at commit.
            off = sa.func.set_config("synchronous_commit", "off", sa.true())
            where = where & off.is_not(None)
        return (
            matches.update()
            .where(where)
            .values(
                status=MatchStatus.RUNNING.value,
                detail=sa.bindparam("b_worker"),
                attempts=matches.c.attempts + 1,
                updated_at=sa.bindparam("b_at"),
            )
            .returning(matches.c.match_id if many else matches.c.status)
        )

    def claim_match(self, match_id: str, worker: str = "") -> MatchStatus | None:
        """Mark a scheduled match RUNNING (an attempt) unless it is DONE or CANCELLED, in one
        round trip; its status afterwards (RUNNING when claimed), None if not scheduled.

        The seasons' jobs call it before every match. The status is advisory (the result
        is what counts), so on PostgreSQL this commit does not wait for the WAL flush.
        """
        values = {"b_match_id": match_id, "b_worker": worker, "b_at": _now()}
        return self._again_if_dropped(lambda: self._claim_once(match_id, values))

    def claim_matches(self, match_ids: Sequence[str], worker: str = "") -> dict[str, MatchStatus]:
        """:meth:`claim_match` for several matches (a batch job), each by its own id, in one
        round trip (PostgreSQL: one statement; SQLite: an UPDATE, and a read of the rest
        when some were DONE or CANCELLED); each scheduled id's status afterwards (RUNNING
        when claimed); ids not scheduled are absent."""
        ids = list(dict.fromkeys(match_ids))
        if not ids:
            return {}
        return self._again_if_dropped(lambda: self._claim_many_once(ids, worker))

    def _claim_many_once(self, ids: list[str], worker: str) -> dict[str, MatchStatus]:
        if self._postgres:
            return self.send_claim(ids, worker).wait()
        out: dict[str, MatchStatus] = {}
        with self._claim_connection() as conn:
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                claimed = set(
                    conn.execute(
                        self._claim_many, {"b_ids": chunk, "b_worker": worker, "b_at": _now()}
                    ).scalars()
                )
                out.update(dict.fromkeys(claimed, MatchStatus.RUNNING))
                rest = [m for m in chunk if m not in claimed]
                if rest:
                    for m, st in conn.execute(self._statuses, {"b_ids": rest}).all():
                        out[m] = MatchStatus(st)
        return out

    def send_claim(self, match_ids: Sequence[str], worker: str = "") -> PendingClaim:
        """:meth:`claim_matches` without waiting for the database (PostgreSQL: sent, its
        answer read by ``wait()``; SQLite: claimed before the call returns). A batch job
        plays its first match meanwhile and looks at the claim before recording it."""
        ids = list(dict.fromkeys(match_ids))
        if not ids:
            return PendingClaim({})
        if not self._postgres:
            return PendingClaim(self.claim_matches(ids, worker))
        what = "claim matches"
        params = [orjson.dumps(ids), worker.encode(), _now().isoformat().encode()]
        flight: _Flight | None
        try:
            flight = self._pg_send(_CLAIM_MANY_NAME, _CLAIM_MANY_PG, params, what)
        except _ConnectionLost as exc:  # a dropped pooled connection: wait() retries
            log.info("store: connection dropped (%s); the claim is retried", exc)
            flight = None

        def collect() -> dict[str, MatchStatus]:
            rows = self._pg_run(_CLAIM_MANY_NAME, _CLAIM_MANY_PG, params, what, flight)
            return {m: MatchStatus(st) for m, st in rows}

        return PendingClaim(None, collect)

    @contextmanager
    def _claim_connection(self) -> Iterator[sa.Connection]:
        """Where claims run: autocommit on PostgreSQL (each statement its own transaction,
        one round trip), an advisory write on SQLite."""
        if not self._postgres:
            with self._advisory_write("claim matches") as conn:
                yield conn
            return
        with self.guard("claim matches"), self.engine.connect() as conn:
            yield conn.execution_options(isolation_level="AUTOCOMMIT")

    def _claim_once(self, match_id: str, values: dict[str, Any]) -> MatchStatus | None:
        matches = t.scheduled_matches
        if self._postgres:
            # One statement in autocommit: one round trip instead of BEGIN, SET LOCAL,
            # UPDATE and COMMIT.
            with self.guard("claim match"), self.engine.connect() as conn:
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
                claimed = conn.execute(self._claim, values).scalar_one_or_none()
                if claimed is None:
                    claimed = conn.execute(
                        sa.select(matches.c.status).where(matches.c.match_id == match_id)
                    ).scalar_one_or_none()
        else:
            with self._advisory_write("claim match") as conn:
                claimed = conn.execute(self._claim, values).scalar_one_or_none()
                if claimed is None:
                    claimed = conn.execute(
                        sa.select(matches.c.status).where(matches.c.match_id == match_id)
                    ).scalar_one_or_none()
        return None if claimed is None else MatchStatus(claimed)
